import { existsSync } from 'node:fs';
import path from 'node:path';
import type { Config } from '../config.js';

/**
 * The operator tool works on the server's data and never creates any: with the embedded database it
 * needs `<DATA_DIR>/pgdata` (a PostgreSQL data directory, `PG_VERSION` inside) and the master key file
 * the server wrote. Answers the refusal to print, naming the folder looked in, or undefined when
 * the data is there. (A first start of the server creates both.)
 */
export function requireExistingData(
  config: Pick<Config, 'dataDir' | 'storage' | 'masterKey'>,
): string | undefined {
  const hint =
    'start the exchange once (npm start) to create it, or set DATA_DIR to the folder that holds it';
  if (config.storage.kind === 'pglite' && config.storage.dataDir !== undefined) {
    if (!existsSync(path.join(config.storage.dataDir, 'PG_VERSION'))) {
      return `no exchange database in ${config.storage.dataDir}: ${hint}`;
    }
  }
  if (config.masterKey.kind === 'file' && !existsSync(config.masterKey.path)) {
    return `no master key at ${config.masterKey.path}: ${hint} (or set MASTER_KEY / MASTER_KEY_FILE)`;
  }
  return undefined;
}
