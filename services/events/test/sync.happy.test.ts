/**
 * `GET /events/sync` against real PostgreSQL with two instances (each with its read cache and
 * change feed), and PGlite alone: a full sync paged, then creates, changes, a PRIVATE switch and
 * deletes written on both instances, and each caller's incremental sync (through the other
 * instance, paged) sees them in change order with the right tombstones, never one for an event
 * it could never see; applying it to the copy gives exactly the server's list. Then 410 on
 * malformed, foreign, expired and pruned tokens.
 */
import { useTestDatabase } from '@platform/testkit/fixtures';
import { until } from '@platform/testkit/wait';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pruneChanges } from '../src/changes/change-log.js';
import type { OpenedStorage } from '../src/storage/open-store.js';
import {
  call,
  featureSettings,
  hmacToken,
  newId,
  openPgliteStorage,
  openProductionStorage,
  startApp,
  type TestApp,
  validBody,
} from './helpers.js';

type Item = Record<string, unknown> & { eventId?: string; id?: string; deleted?: boolean };
interface SyncAnswer {
  items: Item[];
  next_page_token?: string;
  next_sync_token?: string;
}

const db = useTestDatabase('events_sync');

interface Setup {
  name: string;
  open(): Promise<{ a: TestApp; b: TestApp; storages: OpenedStorage[] }>;
}

async function appOn(storage: OpenedStorage, env: Record<string, string> = {}): Promise<TestApp> {
  return startApp({
    store: storage.store,
    features: { sql: storage.sql, settings: featureSettings({ WEBHOOK_DISPATCH: 'false', ...env }) },
  });
}

const setups: Setup[] = [
  {
    name: 'PostgreSQL, two instances',
    async open() {
      const storages = [
        await openProductionStorage({ kind: 'postgres', url: db.url, poolMax: 4 }),
        await openProductionStorage({ kind: 'postgres', url: db.url, poolMax: 4 }),
      ];
      return { a: await appOn(storages[0]!), b: await appOn(storages[1]!), storages };
    },
  },
  {
    name: 'PGlite alone',
    async open() {
      const storage = await openPgliteStorage();
      const app = await appOn(storage);
      return { a: app, b: app, storages: [storage] };
    },
  },
];

/** Every page of a sync from `query` (one of `sync_token=...` or empty), following next_page_token. */
async function syncAll(
  app: TestApp,
  token: string | undefined,
  query: string,
  limit: number,
): Promise<SyncAnswer> {
  const items: Item[] = [];
  let next = `/events/sync?limit=${limit}${query}`;
  for (let page = 0; page < 100; page++) {
    const answer = await call(app, next, token === undefined ? {} : { token });
    expect(answer.status, answer.text).toBe(200);
    const body = answer.json as SyncAnswer;
    items.push(...body.items);
    if (body.next_page_token === undefined) {
      expect(body.next_sync_token).toBeDefined();
      return { items, next_sync_token: body.next_sync_token };
    }
    expect(body.next_sync_token).toBeUndefined();
    next = `/events/sync?limit=${limit}&page_token=${body.next_page_token}`;
  }
  throw new Error('sync did not end');
}

/** The caller's copy after applying items, as the client of the issue keeps it. */
function apply(copy: Map<string, Item>, items: readonly Item[]): void {
  for (const item of items) {
    if (item.deleted === true) copy.delete(String(item.id));
    else copy.set(String(item.eventId), item);
  }
}

async function listAll(
  app: TestApp,
  token: string | undefined,
  ids: ReadonlySet<string>,
): Promise<Map<string, Item>> {
  const view = new Map<string, Item>();
  for (let page = 1; page < 1_000; page++) {
    const answer = await call(app, `/events?limit=100&page=${page}`, token === undefined ? {} : { token });
    const events = answer.json as Item[];
    for (const event of events) if (ids.has(String(event.eventId))) view.set(String(event.eventId), event);
    if (events.length < 100) return view;
  }
  return view;
}

describe.each(setups)('sync ($name)', (setup) => {
  let a: TestApp;
  let b: TestApp;
  let storages: OpenedStorage[] = [];
  const tokens: Record<string, string | undefined> = {};

  beforeAll(async () => {
    ({ a, b, storages } = await setup.open());
    tokens.alice = await hmacToken('alice');
    tokens.bob = await hmacToken('bob');
    tokens.carol = await hmacToken('carol', { member: true });
    tokens.anonymous = undefined;
  });
  afterAll(async () => {
    await a?.close();
    if (b !== a) await b?.close();
    for (const storage of storages) await storage.store.close();
  });

  it('full sync, then each change in order with tombstones for deleted and hidden events, across instances', async () => {
    const put = async (app: TestApp, who: string, id: string, fields: Record<string, unknown>) => {
      const answer = await call(app, `/events/${id}`, {
        method: 'PUT',
        token: tokens[who],
        body: { ...validBody, ...fields },
      });
      expect(answer.status, answer.text).toBeLessThan(300);
    };
    const remove = async (app: TestApp, who: string, id: string) => {
      expect((await call(app, `/events/${id}`, { method: 'DELETE', token: tokens[who] })).status).toBe(204);
    };
    const [e1, e2, e3, e4, e5] = [newId('s1'), newId('s2'), newId('s3'), newId('s4'), newId('s5')];
    const ids = new Set([e1, e2, e3, e4, e5]);
    await put(a, 'alice', e1, { name: 'one' });
    await put(b, 'alice', e2, { name: 'two', access: 'PRIVATE' });
    await put(a, 'bob', e3, { name: 'three' });

    // Full syncs, paged one item at a time, through instance b.
    const viewers = ['anonymous', 'alice', 'bob', 'carol'] as const;
    const copies = new Map<string, Map<string, Item>>();
    const syncTokens = new Map<string, string>();
    const expectedFull = { anonymous: [e1, e3], alice: [e1, e2, e3], bob: [e1, e3], carol: [e1, e2, e3] };
    for (const viewer of viewers) {
      const full = await syncAll(b, tokens[viewer], '', 1);
      const mine = full.items.filter((item) => ids.has(String(item.eventId)));
      expect(mine.map((item) => item.eventId).sort(), viewer).toEqual([...expectedFull[viewer]].sort());
      // An item is the event as GET /events/{id} answers it.
      const one = await call(
        b,
        `/events/${e1}`,
        tokens[viewer] === undefined ? {} : { token: tokens[viewer] },
      );
      expect(mine.find((item) => item.eventId === e1)).toEqual(one.json);
      const copy = new Map<string, Item>();
      apply(copy, mine);
      copies.set(viewer, copy);
      syncTokens.set(viewer, String(full.next_sync_token));
    }

    // Changes written on both instances, in this order.
    await put(b, 'alice', e4, { name: 'four' }); // created (visible to everyone for a while)
    await put(a, 'alice', e1, { name: 'one, changed' }); // changed
    await put(b, 'bob', e3, { name: 'three', access: 'PRIVATE' }); // made PRIVATE by its creator
    await remove(a, 'alice', e2); // a PRIVATE event deleted
    await remove(b, 'alice', e4); // created and deleted since the token
    await put(a, 'alice', e5, { name: 'five', access: 'PRIVATE' }); // PRIVATE from the start

    const expected: Record<(typeof viewers)[number], [string, 'item' | 'tombstone'][]> = {
      // e2 and e5 were never visible to the anonymous caller or bob: no trace of them.
      anonymous: [
        [e1, 'item'],
        [e3, 'tombstone'],
        [e4, 'tombstone'],
      ],
      bob: [
        [e1, 'item'],
        [e3, 'item'],
        [e4, 'tombstone'],
      ],
      alice: [
        [e1, 'item'],
        [e3, 'tombstone'],
        [e2, 'tombstone'],
        [e4, 'tombstone'],
        [e5, 'item'],
      ],
      carol: [
        [e1, 'item'],
        [e3, 'item'],
        [e2, 'tombstone'],
        [e4, 'tombstone'],
        [e5, 'item'],
      ],
    };
    for (const viewer of viewers) {
      // Through instance a, two items a page, repeating the sync token with the page token.
      const token = syncTokens.get(viewer);
      const delta = await syncAll(a, tokens[viewer], `&sync_token=${token}`, 2);
      const mine = delta.items.filter((item) => ids.has(String(item.eventId ?? item.id)));
      expect(
        mine.map((item) => [item.eventId ?? item.id, item.deleted === true ? 'tombstone' : 'item']),
        viewer,
      ).toEqual(expected[viewer]);
      for (const item of mine)
        if (item.deleted === true) expect(Object.keys(item).sort()).toEqual(['deleted', 'id']);
      const copy = copies.get(viewer) ?? new Map();
      apply(copy, mine);
      const view = await until(
        `${viewer}'s list to settle`,
        async () => {
          const listed = await listAll(b, tokens[viewer], ids);
          return (
            JSON.stringify([...listed.entries()].sort()) === JSON.stringify([...copy.entries()].sort()) &&
            listed
          );
        },
        5_000,
      );
      expect([...copy.keys()].sort()).toEqual([...view.keys()].sort());
      // Nothing changed since: the next sync is empty and gives a token again.
      const again = await syncAll(b, tokens[viewer], `&sync_token=${delta.next_sync_token}`, 2);
      expect(again.items.filter((item) => ids.has(String(item.eventId ?? item.id)))).toEqual([]);
    }
    expect(copies.get('alice')?.get(e1)?.name).toBe('one, changed');
  });

  it('answers 410 in the error shape for malformed, foreign and edited tokens; 400 for a bad limit', async () => {
    const full = (await call(a, '/events/sync?limit=1000')).json as SyncAnswer;
    const token = String(full.next_sync_token);
    const gone = [
      [`/events/sync?sync_token=${'x'.repeat(40)}`, undefined],
      [`/events/sync?sync_token=${'a'.repeat(5_000)}`, undefined],
      [`/events/sync?sync_token=`, undefined],
      [`/events/sync?page_token=${token}`, undefined], // a sync token is not a page token
      [`/events/sync?sync_token=${token.slice(0, -1)}${token.endsWith('A') ? 'B' : 'A'}`, undefined],
      [`/events/sync?sync_token=${token}`, tokens.alice], // made for the anonymous view
    ] as const;
    for (const [path, who] of gone) {
      const answer = await call(a, path, who === undefined ? {} : { token: who });
      expect(answer.status, path.slice(0, 80)).toBe(410);
      expect(answer.json).toEqual({
        statusCode: 410,
        message: expect.stringContaining('full sync'),
        error: 'Gone',
      });
      expect(answer.headers.get('x-request-id')).toBeTruthy();
    }
    for (const limit of ['0', '1001', 'x', '1.5']) {
      const answer = await call(a, `/events/sync?limit=${limit}`);
      expect(answer.status).toBe(400);
      expect(answer.json).toMatchObject({ statusCode: 400, error: 'Bad Request' });
    }
    // A token of another view's page is refused as well.
    const paged = (await call(a, '/events/sync?limit=1', { token: tokens.carol })).json as SyncAnswer;
    expect(paged.next_page_token).toBeDefined();
    expect((await call(a, `/events/sync?page_token=${paged.next_page_token}`)).status).toBe(410);
    // GET /events/sync is the sync route, so an event cannot take the id `sync`.
    const reserved = await call(a, '/events/sync', { method: 'PUT', token: tokens.alice, body: validBody });
    expect(reserved.status).toBe(400);
    expect(reserved.text).toContain('reserved');
  });

  it('answers 410 for a token older than SYNC_RETENTION and for one before the pruned log', async () => {
    const storage = storages[0]!;
    const shortLived = await appOn(storage, { SYNC_RETENTION: '1' });
    try {
      const old = ((await call(shortLived, '/events/sync?limit=1000')).json as SyncAnswer).next_sync_token;
      const fresh = ((await call(a, '/events/sync?limit=1000')).json as SyncAnswer).next_sync_token;
      await call(a, `/events/${newId('p')}`, { method: 'PUT', token: tokens.alice, body: validBody });
      await new Promise((resolve) => setTimeout(resolve, 2_100));
      const expired = await call(shortLived, `/events/sync?sync_token=${old}`);
      expect(expired.status).toBe(410);
      expect(expired.text).toContain('older than the sync retention');
      // Within a's 30 days, until the change after it is pruned.
      expect((await call(a, `/events/sync?sync_token=${fresh}`)).status).toBe(200);
      while ((await pruneChanges(storage.sql, new Date(Date.now() - 1_000))) > 0);
      const pruned = await call(a, `/events/sync?sync_token=${fresh}`);
      expect(pruned.status).toBe(410);
      expect(pruned.text).toContain('pruned');
      // A full sync works again, and so does its token.
      const restart = ((await call(a, '/events/sync?limit=1000')).json as SyncAnswer).next_sync_token;
      expect((await call(a, `/events/sync?sync_token=${restart}`)).status).toBe(200);
    } finally {
      await shortLived.close();
    }
  });
});
