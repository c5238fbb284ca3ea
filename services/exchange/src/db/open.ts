import { fileURLToPath } from 'node:url';
import { withDatabaseSpans } from '@platform/observability/client-spans';
import type { Schema } from '@platform/sql-storage/migrate';
import { openStorage as openSqlStorage, type StorageConfig } from '@platform/sql-storage/open';
import type { Database } from './database.js';
import { orderedConnection, statementName } from './postgres.js';

/** The exchange's migrations (`migrations/NNN_name.sql`) and its start-up lock. */
export const schema: Schema = {
  migrationsDir: fileURLToPath(new URL('./migrations/', import.meta.url)),
  lockKey: 726373,
};

/** Opens the configured storage, brings its schema up to date and adds the ordered channel. */
export async function openStorage(storage: StorageConfig): Promise<Database> {
  const db = await openSqlStorage(storage, { schema, postgres: { statementName } });
  if (storage.kind === 'postgres') return { ...db, ordered: () => orderedConnection(storage.url) };
  // PGlite runs in this process: its statements are spans of the request's trace made here (the pg
  // instrumentation covers PostgreSQL's). It runs one statement at a time, in the order of the
  // calls: the database is ordered already.
  const traced = withDatabaseSpans('exchange', db);
  return { ...traced, ordered: () => ({ query: traced.query, release: async () => {} }) };
}
