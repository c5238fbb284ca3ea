import { setTimeout as sleep } from 'node:timers/promises';
import { useTestDatabase } from '@platform/testkit/fixtures';
import { createTestDatabase } from '@platform/testkit/postgres';
import { describe, expect, it } from 'vitest';
import { atOffset } from '../src/domain/pagination.js';
import { createCachedEventStore } from '../src/storage/cached-event-store.js';
import type { EventFields, EventStore } from '../src/storage/event-store.js';
import { MIGRATIONS, migrate } from '../src/storage/migrations.js';
import { openEventStore } from '../src/storage/open-store.js';
import { createPgChangeFeed, FEED_APPLICATION_NAME } from '../src/storage/pg-change-feed.js';
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
  it('a write by one instance reaches the cache of another through NOTIFY, whose lag it measures', async () => {
    const a: EventStore = await openEventStore(
      { kind: 'postgres', url: db.url, poolMax: 2 },
      { cacheMaxEntries: 100 },
    );
    const lags: number[] = [];
    const b: EventStore = await openEventStore(
      { kind: 'postgres', url: db.url, poolMax: 2 },
      { cacheMaxEntries: 100, onChangeFeedLag: (seconds) => lags.push(seconds) },
    );
    try {
      const id = newId();
      const created = (await a.insert(id, fields, 'alice', new Date()))!;
      // Asked for twice: the cache keeps an answer from the second request of its key on.
      expect((await b.get(id))?.name).toBe('v1');
      expect((await b.get(id))?.name).toBe('v1'); // now cached in b
      await b.list({ kind: 'all' }, atOffset(0), 100);
      const listed = (await b.list({ kind: 'all' }, atOffset(0), 100)).total;
      await a.replace(id, created.revision, { ...fields, name: 'v2' }, new Date());
      await eventually(async () => (await b.get(id))?.name === 'v2');
      await a.insert(newId(), fields, 'alice', new Date());
      await eventually(async () => (await b.list({ kind: 'all' }, atOffset(0), 100)).total === listed + 1);
      // Each notification carries the statement's time (migration 6): a lag in seconds, small here.
      expect(lags.length).toBeGreaterThanOrEqual(2);
      for (const lag of lags) expect(lag).toBeLessThan(5);
    } finally {
      await a.close();
      await b.close();
    }
  });
});

describe('read cache under a write mix across instances', () => {
  it('reads on one instance follow writes on another, also while its LISTEN connection is killed', async () => {
    const storage = { kind: 'postgres' as const, url: db.url, poolMax: 2 };
    const writer = await openEventStore(storage, { cacheMaxEntries: 100 });
    const reader = await openEventStore(storage, { cacheMaxEntries: 100 });
    const admin = createPgClient({ url: db.url, poolMax: 1 });
    try {
      const ids = [newId('mix'), newId('mix'), newId('mix')];
      const revisions = new Map<string, string>();
      for (const id of ids)
        revisions.set(id, (await writer.insert(id, fields, 'alice', new Date()))!.revision);
      const total = async () => (await reader.list({ kind: 'all' }, atOffset(0), 1)).total;
      const feedsConnected = () =>
        eventually(async () => {
          const rows = await admin.query<{ n: string }>(
            `SELECT count(*) AS n FROM pg_stat_activity
             WHERE datname = current_database() AND application_name = $1 AND query LIKE 'LISTEN%'`,
            [FEED_APPLICATION_NAME],
          );
          return Number(rows[0]?.n) === 2;
        });
      let expectedTotal = await total();
      for (let round = 0; round < 30; round++) {
        // Warm the reader's cache with every event and a page (each asked for twice: the cache keeps
        // an answer from the second request of its key on), then change one of them on the writer.
        for (const id of ids) await reader.get(id);
        for (const id of ids) await reader.get(id);
        await total();
        await total();
        if (round === 10 || round === 20) {
          await feedsConnected();
          // Kill the LISTEN connections (both instances'): notifications sent now are lost.
          const killed = await admin.query<{ ok: boolean }>(
            `SELECT pg_terminate_backend(pid) AS ok FROM pg_stat_activity
             WHERE datname = current_database() AND application_name = $1`,
            [FEED_APPLICATION_NAME],
          );
          expect(killed.length).toBeGreaterThanOrEqual(2);
        }
        const id = ids[round % ids.length]!;
        const name = `round-${round}`;
        if (round % 7 === 3) {
          await writer.remove(id, revisions.get(id)!);
          const again = (await writer.insert(id, { ...fields, name }, 'alice', new Date()))!;
          revisions.set(id, again.revision);
          await writer.insert(newId('extra'), fields, 'alice', new Date());
          expectedTotal += 1;
        } else {
          const replaced = await writer.replace(id, revisions.get(id)!, { ...fields, name }, new Date());
          revisions.set(id, replaced!.revision);
        }
        // Within the notification latency (or at once while the feed is down) the reader sees it.
        await eventually(async () => (await reader.get(id))?.name === name);
        await eventually(async () => (await total()) === expectedTotal);
      }
      // After the kills the feeds are back: the reader caches again and still follows writes.
      await feedsConnected();
      const last = ids[0]!;
      await reader.get(last);
      await reader.get(last);
      const final = await writer.replace(
        last,
        revisions.get(last)!,
        { ...fields, name: 'final' },
        new Date(),
      );
      expect(final).toBeDefined();
      await eventually(async () => (await reader.get(last))?.name === 'final');
    } finally {
      await writer.close();
      await reader.close();
      await admin.close();
    }
  });
});
