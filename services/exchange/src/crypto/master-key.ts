import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { type MasterKeySource, parseMasterKey } from '../config.js';

/**
 * Resolves the master key: the configured value, or a key file. For the embedded default the file
 * (`<DATA_DIR>/master.key`, mode 0600) is generated once on first start and reused afterwards.
 * Losing it makes the stored API secrets unreadable.
 */
export function resolveMasterKey(source: MasterKeySource): { key: Buffer; created: boolean } {
  if (source.kind === 'value') return { key: source.key, created: false };
  try {
    return {
      key: parseMasterKey(readFileSync(source.path, 'utf8'), `master key file ${source.path}`),
      created: false,
    };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT' || !source.createIfMissing) throw error;
  }
  mkdirSync(path.dirname(source.path), { recursive: true });
  const key = randomBytes(32);
  // 'wx' refuses to overwrite a key another process wrote in the meantime.
  writeFileSync(source.path, `${key.toString('hex')}\n`, { mode: 0o600, flag: 'wx' });
  return { key, created: true };
}
