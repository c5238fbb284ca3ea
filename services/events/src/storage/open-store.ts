import type { StorageConfig } from '../config.js';
import { type CacheCounters, createCachedEventStore } from './cached-event-store.js';
import { createEventStore, type EventStore } from './event-store.js';
import { migrate } from './migrations.js';
import { createPgChangeFeed } from './pg-change-feed.js';
import { createPgClient } from './pg-client.js';
import { createPgliteClient } from './pglite-client.js';
import type { SqlClient } from './sql-client.js';

export interface OpenOptions {
  /** `READ_CACHE_MAX_ENTRIES`; 0 turns the read cache off. */
  cacheMaxEntries: number;
  /** Errors of background connections (pool idle clients, the change feed): logged, never fatal. */
  onBackgroundError?: (error: Error) => void;
  /** The read cache's counters, for the metrics. */
  cacheCounters?: CacheCounters;
  /** Hears the change feed's lag per notification (PostgreSQL only), for the metrics. */
  onChangeFeedLag?: (seconds: number) => void;
}

/** The store and the database under it (which the sync, calendar and webhook routes read). */
export interface OpenedStorage {
  store: EventStore;
  sql: SqlClient;
}

/** Opens the configured database, applies pending migrations and returns the (cached) store. */
export async function openEventStore(storage: StorageConfig, options: OpenOptions): Promise<EventStore> {
  return (await openStorage(storage, options)).store;
}

/** `openEventStore`, also answering the database client the store uses. */
export async function openStorage(storage: StorageConfig, options: OpenOptions): Promise<OpenedStorage> {
  const client: SqlClient =
    storage.kind === 'postgres'
      ? createPgClient({ url: storage.url, poolMax: storage.poolMax, onIdleError: options.onBackgroundError })
      : await createPgliteClient(storage.dir);
  try {
    await migrate(client);
  } catch (error) {
    await client.close().catch(() => undefined);
    throw error;
  }
  const store = createEventStore(client);
  if (options.cacheMaxEntries === 0) return { store, sql: client };
  // PGlite is opened by this process only, so it sees every write itself and needs no feed.
  const feed =
    storage.kind === 'postgres'
      ? createPgChangeFeed(storage.url, options.onBackgroundError, options.onChangeFeedLag)
      : undefined;
  const cached = await createCachedEventStore(store, {
    maxEntries: options.cacheMaxEntries,
    feed,
    ...(options.cacheCounters ? { counters: options.cacheCounters } : {}),
  });
  return { store: cached, sql: client };
}
