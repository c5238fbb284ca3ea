import type { StorageConfig } from '../config.js';
import { createEventStore, type EventStore } from './event-store.js';
import { migrate } from './migrations.js';
import { createPgClient } from './pg-client.js';
import { createPgliteClient } from './pglite-client.js';
import type { SqlClient } from './sql-client.js';

/** Opens the configured database, applies pending migrations and returns the store. */
export async function openEventStore(
  storage: StorageConfig,
  onIdleError?: (error: Error) => void,
): Promise<EventStore> {
  const client: SqlClient =
    storage.kind === 'postgres'
      ? createPgClient({ url: storage.url, poolMax: storage.poolMax, onIdleError })
      : await createPgliteClient(storage.dir);
  try {
    await migrate(client);
  } catch (error) {
    await client.close().catch(() => undefined);
    throw error;
  }
  return createEventStore(client);
}
