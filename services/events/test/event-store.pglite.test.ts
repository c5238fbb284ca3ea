import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { atOffset } from '../src/domain/pagination.js';
import { createCachedEventStore } from '../src/storage/cached-event-store.js';
import { createEventStore } from '../src/storage/event-store.js';
import { migrate } from '../src/storage/migrations.js';
import { openEventStore } from '../src/storage/open-store.js';
import { createPgliteClient } from '../src/storage/pglite-client.js';
import { eventStoreContract } from './event-store.contract.js';
import { openPgliteStore } from './helpers.js';

eventStoreContract('PGlite', openPgliteStore);
eventStoreContract('PGlite behind the read cache', async () =>
  createCachedEventStore(await openPgliteStore(), { maxEntries: 3 }),
);

describe('migration 3 (event counts)', () => {
  it('backfills the totals of events written before it', async () => {
    const client = await createPgliteClient(undefined);
    await migrate(client, 2);
    const insert = (id: string, access: string, by: string) =>
      client.query(
        `INSERT INTO events (event_id, name, body, date, date_at, access, created_by, created_at, updated_at)
         VALUES ($1, 'n', 'b', '2026-01-01T00:00:00Z', now(), $2, $3, now(), now())`,
        [id, access, by],
      );
    await insert('p1', 'PUBLIC', 'alice');
    await insert('p2', 'PUBLIC', 'bob');
    await insert('s1', 'PRIVATE', 'alice');
    await insert('s2', 'PRIVATE', 'bob');
    await insert('s3', 'PRIVATE', 'bob');
    expect(await migrate(client)).toEqual([3, 4, 5, 6, 7, 8]);
    const store = createEventStore(client);
    expect((await store.list({ kind: 'public' }, atOffset(0), 10)).total).toBe(2);
    expect((await store.list({ kind: 'creator', userId: 'alice' }, atOffset(0), 10)).total).toBe(3);
    expect((await store.list({ kind: 'creator', userId: 'bob' }, atOffset(0), 10)).total).toBe(4);
    expect((await store.list({ kind: 'all' }, atOffset(0), 10)).total).toBe(5);
    await store.close();
  });
});

describe('PGlite on disk', () => {
  it('keeps events across a reopen and does not re-run migrations', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'events-pglite-'));
    try {
      const first = await openEventStore({ kind: 'pglite', dir }, { cacheMaxEntries: 100 });
      await first.insert(
        'kept',
        { name: 'n', body: 'b', cover: null, date: '2026-01-01T00:00:00Z', access: 'PUBLIC' },
        'alice',
        new Date('2026-01-01T00:00:00Z'),
      );
      await first.close();
      const second = await openEventStore({ kind: 'pglite', dir }, { cacheMaxEntries: 100 });
      expect((await second.get('kept'))?.createdBy).toBe('alice');
      await second.close();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
