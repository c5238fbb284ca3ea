import type { Database } from './database.js';
import { migrate, type Schema } from './migrate.js';
import { openPglite } from './pglite.js';
import { openPostgres, type PostgresOptions } from './postgres.js';

/** Where the storage lives: a PostgreSQL server, or PGlite in a directory (the embedded default). */
export type StorageConfig =
  | { readonly kind: 'postgres'; readonly url: string; readonly poolSize: number }
  | { readonly kind: 'pglite'; readonly dataDir: string | undefined };

export interface OpenOptions {
  /** The service's migrations, applied on open. */
  readonly schema: Schema;
  /** How the PostgreSQL pool runs statements (the pool size comes from the storage config). */
  readonly postgres?: Omit<PostgresOptions, 'poolSize'>;
}

/** Opens the configured storage and brings its schema up to date. */
export async function openStorage(storage: StorageConfig, options: OpenOptions): Promise<Database> {
  const db =
    storage.kind === 'postgres'
      ? openPostgres(storage.url, { ...options.postgres, poolSize: storage.poolSize })
      : await openPglite(storage.dataDir);
  try {
    await migrate(db, options.schema);
  } catch (error) {
    await db.close();
    throw error;
  }
  return db;
}
