import { fileURLToPath } from 'node:url';
import { withDatabaseSpans } from '@platform/observability/client-spans';
import type { Database } from '@platform/sql-storage/database';
import type { Schema } from '@platform/sql-storage/migrate';
import { openStorage as openSqlStorage, type StorageConfig } from '@platform/sql-storage/open';

/** The gateway's migrations (`migrations/NNN_name.sql`) and its start-up lock. */
export const schema: Schema = {
  migrationsDir: fileURLToPath(new URL('./migrations/', import.meta.url)),
  lockKey: 726374,
};

/**
 * Opens the configured storage and brings its schema up to date. PGlite's statements are spans of
 * the request's trace (the pg instrumentation covers PostgreSQL's).
 */
export async function openStorage(storage: StorageConfig): Promise<Database> {
  const db = await openSqlStorage(storage, { schema });
  return db.kind === 'pglite' ? withDatabaseSpans('paygate', db) : db;
}
