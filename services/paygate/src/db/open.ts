import { fileURLToPath } from 'node:url';
import type { Database } from '@platform/sql-storage/database';
import type { Schema } from '@platform/sql-storage/migrate';
import { openStorage as openSqlStorage, type StorageConfig } from '@platform/sql-storage/open';

/** The gateway's migrations (`migrations/NNN_name.sql`) and its start-up lock. */
export const schema: Schema = {
  migrationsDir: fileURLToPath(new URL('./migrations/', import.meta.url)),
  lockKey: 726374,
};

/** Opens the configured storage and brings its schema up to date. */
export function openStorage(storage: StorageConfig): Promise<Database> {
  return openSqlStorage(storage, { schema });
}
