import { setTimeout as sleep } from 'node:timers/promises';
import { useTestDatabase } from '@platform/testkit/fixtures';
import { createTestDatabase } from '@platform/testkit/postgres';
import { describe, expect, it } from 'vitest';
import { createCachedEventStore } from '../src/storage/cached-event-store.js';
import type { EventFields, EventStore } from '../src/storage/event-store.js';
import { MIGRATIONS, migrate } from '../src/storage/migrations.js';
import { openEventStore } from '../src/storage/open-store.js';
import { createPgChangeFeed } from '../src/storage/pg-change-feed.js';
import { createPgClient } from '../src/storage/pg-client.js';
import { eventStoreContract } from './event-store.contract.js';
import { newId, openPostgresStore } from './helpers.js';

const db = useTestDatabase('events');

eventStoreContract('PostgreSQL', () => openPostgresStore(db.url));
eventStoreContract('PostgreSQL behind the read cache', async () =>
  createCachedEventStore(await openPostgresStore(db.url), {
    maxEntries: 3,
    feed: createPgChangeFeed(db.url),
  }),
);

describe('migrations on PostgreSQL', () => {
  it('apply once even when several instances start together on a fresh database', async () => {
    // A database of its own: the file's shared one is already migrated by the contract suites,
    // where every instance would find nothing to do and the race would never happen.
    const fresh = await createTestDatabase('events_migrate');
    const clients = [1, 2, 3].map(() => createPgClient({ url: fresh.url, poolMax: 2 }));
    try {
      const applied = await Promise.all(clients.map((client) => migrate(client)));
      const all = MIGRATIONS.map((migration) => migration.version);
      // Exactly one instance applied everything, in order; the others found it done.
      expect(applied.filter((versions) => versions.length > 0)).toEqual([all]);
      expect(applied.flat().sort()).toEqual(all);
      const rows = await clients[0]!.query<{ version: number }>(
        'SELECT version FROM events_schema_migrations ORDER BY version',
      );
      expect(rows.map((row) => Number(row.version))).toEqual(all);
    } finally {
      await Promise.all(clients.map((client) => client.close()));
      await fresh.drop();
    }
  });
});

const fields: EventFields = {
  name: 'v1',
  body: 'b',
  cover: null,
  date: '2026-01-01T00:00:00Z',
  access: 'PUBLIC',
};

async function eventually(check: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (await check()) return;
    await sleep(25);
  }
  throw new Error('condition not reached within 5 s');
}

describe('read cache across instances', () => {
  it('a write by one instance reaches the cache of another through NOTIFY', async () => {
    const a: EventStore = await openEventStore(
      { kind: 'postgres', url: db.url, poolMax: 2 },
      { cacheMaxEntries: 100 },
    );
    const b: EventStore = await openEventStore(
      { kind: 'postgres', url: db.url, poolMax: 2 },
      { cacheMaxEntries: 100 },
    );
    try {
      const id = newId();
      const created = (await a.insert(id, fields, 'alice', new Date()))!;
      expect((await b.get(id))?.name).toBe('v1'); // now cached in b
      const listed = (await b.list({ kind: 'all' }, 0, 100)).total;
      await a.replace(id, created.revision, { ...fields, name: 'v2' }, new Date());
      await eventually(async () => (await b.get(id))?.name === 'v2');
      await a.insert(newId(), fields, 'alice', new Date());
      await eventually(async () => (await b.list({ kind: 'all' }, 0, 100)).total === listed + 1);
    } finally {
      await a.close();
      await b.close();
    }
  });
});
