/**
 * The development secret used when neither `JWT_SECRET` nor `JWT_JWKS_URL` is set: 32 random bytes,
 * written once (mode 0600) next to the embedded database and reused on every start, so tokens minted
 * with `npm run token -w services/events -- <user-id>` stay valid. Unsigned tokens are never accepted.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';

export async function loadOrCreateDevSecret(file: string): Promise<{ secret: string; created: boolean }> {
  try {
    const secret = (await readFile(file, 'utf8')).trim();
    if (secret.length >= 43) return { secret, created: false };
    throw new Error(`${file} holds a secret shorter than 32 bytes: delete it to generate a new one`);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  await mkdir(dirname(file), { recursive: true });
  const secret = randomBytes(32).toString('base64url');
  try {
    // 'wx': another process starting at the same moment keeps its secret; then read it back.
    await writeFile(file, `${secret}\n`, { mode: 0o600, flag: 'wx' });
    return { secret, created: true };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    return { secret: (await readFile(file, 'utf8')).trim(), created: false };
  }
}
