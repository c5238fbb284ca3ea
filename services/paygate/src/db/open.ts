import type { StorageConfig } from '../config.js';
import type { Database } from './database.js';
import { migrate } from './migrate.js';
import { openPglite } from './pglite.js';
import { openPostgres } from './postgres.js';

/** Opens the configured storage and brings its schema up to date. */
export async function openStorage(storage: StorageConfig): Promise<Database> {
  const db =
    storage.kind === 'postgres'
      ? openPostgres(storage.url, storage.poolSize)
      : await openPglite(storage.dataDir);
  try {
    await migrate(db);
  } catch (error) {
    await db.close();
    throw error;
  }
  return db;
}
