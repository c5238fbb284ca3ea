import { setTimeout as sleep } from 'node:timers/promises';
import { useTestDatabase } from '@platform/testkit/fixtures';
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
  it('apply once even when several instances start together', async () => {
    const clients = [1, 2, 3].map(() => createPgClient({ url: db.url, poolMax: 2 }));
    try {
      const applied = await Promise.all(clients.map((client) => migrate(client)));
      // The contract suite may have migrated first; in any case no migration ran twice.
      expect(applied.flat().filter((version) => version === 1).length).toBeLessThanOrEqual(1);
      const rows = await clients[0]!.query<{ n: string }>(
        'SELECT count(*) AS n FROM events_schema_migrations',
      );
      expect(Number(rows[0]?.n)).toBe(MIGRATIONS.length);
    } finally {
      await Promise.all(clients.map((client) => client.close()));
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
