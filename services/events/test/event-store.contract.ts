/**
 * One contract suite for the event store, run against PostgreSQL and PGlite: both must behave the
 * same, including compare-and-set writes, ordering, visibility scopes and never-reused revisions.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { atOffset, type ListPosition } from '../src/domain/pagination.js';
import type { EventFields, EventStore, ListScope } from '../src/storage/event-store.js';
import { newId } from './helpers.js';

const fields = (overrides: Partial<EventFields> = {}): EventFields => ({
  name: 'n',
  body: 'b',
  cover: null,
  date: '2026-05-01T10:00:00Z',
  access: 'PUBLIC',
  ...overrides,
});

const T0 = new Date('2026-01-01T00:00:00.000Z');
const T1 = new Date('2026-01-02T00:00:00.000Z');

export function eventStoreContract(name: string, open: () => Promise<EventStore>): void {
  describe(`EventStore contract: ${name}`, () => {
    let store: EventStore;
    beforeAll(async () => {
      store = await open();
    });
    afterAll(async () => {
      await store.close();
    });

    it('inserts and reads back every field, keeping the date as sent', async () => {
      const id = newId();
      const created = await store.insert(
        id,
        fields({ cover: 'https://x.test/c.png', date: '2026-05-01T18:30:00+02:00', access: 'PRIVATE' }),
        'alice',
        T0,
      );
      expect(created).toMatchObject({
        eventId: id,
        cover: 'https://x.test/c.png',
        date: '2026-05-01T18:30:00+02:00',
        access: 'PRIVATE',
        createdBy: 'alice',
      });
      expect(created?.createdAt.toISOString()).toBe(T0.toISOString());
      expect(created?.updatedAt.toISOString()).toBe(T0.toISOString());
      expect(await store.get(id)).toEqual(created);
      expect(await store.get(newId('missing'))).toBeUndefined();
    });

    it('refuses a second insert of the same id without changing the first', async () => {
      const id = newId();
      await store.insert(id, fields({ name: 'first' }), 'alice', T0);
      expect(await store.insert(id, fields({ name: 'second' }), 'bob', T1)).toBeUndefined();
      expect((await store.get(id))?.name).toBe('first');
    });

    it('replaces only at the expected revision and gives a new revision', async () => {
      const id = newId();
      const created = (await store.insert(id, fields(), 'alice', T0))!;
      const replaced = await store.replace(id, created.revision, fields({ name: 'renamed' }), T1);
      expect(replaced?.name).toBe('renamed');
      expect(replaced?.revision).not.toBe(created.revision);
      expect(replaced?.createdAt.toISOString()).toBe(T0.toISOString());
      expect(replaced?.updatedAt.toISOString()).toBe(T1.toISOString());
      expect(replaced?.createdBy).toBe('alice');
      // The stale revision no longer matches: nothing changes.
      expect(await store.replace(id, created.revision, fields({ name: 'lost update' }), T1)).toBeUndefined();
      expect((await store.get(id))?.name).toBe('renamed');
    });

    it('removes only at the expected revision; revisions are never reused after re-creation', async () => {
      const id = newId();
      const first = (await store.insert(id, fields(), 'alice', T0))!;
      expect(await store.remove(id, '999999999')).toBe(false);
      expect(await store.remove(id, first.revision)).toBe(true);
      expect(await store.get(id)).toBeUndefined();
      expect(await store.remove(id, first.revision)).toBe(false);
      const again = (await store.insert(id, fields(), 'alice', T0))!;
      expect(again.revision).not.toBe(first.revision);
    });

    it('lists by date instant then eventId, paginates, counts, and filters by scope', async () => {
      const owner = newId('owner');
      const other = newId('other');
      // Dates sort by instant, whatever their offset: 12:00+02:00 is 10:00Z, after 09:30Z. Year 1900
      // sorts before the other tests' rows, so these are on the first page however many there are.
      const tag = newId('list');
      await store.insert(`${tag}-c`, fields({ date: '1900-01-01T12:00:00+02:00' }), owner, T0); // 10:00Z
      await store.insert(`${tag}-a`, fields({ date: '1900-01-01T09:30:00Z' }), owner, T0);
      await store.insert(`${tag}-b`, fields({ date: '1900-01-01T09:30:00Z' }), other, T0);
      await store.insert(`${tag}-p`, fields({ date: '1900-01-01T09:00:00Z', access: 'PRIVATE' }), other, T0);
      await store.insert(`${tag}-q`, fields({ date: '1900-01-01T09:15:00Z', access: 'PRIVATE' }), owner, T0);

      const all = await store.list({ kind: 'all' }, atOffset(0), 100);
      const mine = all.events.filter((event) => event.eventId.startsWith(tag)).map((event) => event.eventId);
      expect(mine).toEqual([`${tag}-p`, `${tag}-q`, `${tag}-a`, `${tag}-b`, `${tag}-c`]);

      const publicIds = (await store.list({ kind: 'public' }, atOffset(0), 100)).events.map(
        (event) => event.eventId,
      );
      expect(publicIds).not.toContain(`${tag}-p`);
      expect(publicIds).not.toContain(`${tag}-q`);
      const ownerIds = (await store.list({ kind: 'creator', userId: owner }, atOffset(0), 100)).events.map(
        (e) => e.eventId,
      );
      expect(ownerIds).toContain(`${tag}-q`);
      expect(ownerIds).not.toContain(`${tag}-p`);

      const total = all.total;
      expect(total).toBeGreaterThanOrEqual(5);
      const page = await store.list({ kind: 'all' }, atOffset(1), 2);
      expect(page.total).toBe(total);
      expect(page.events.map((event) => event.eventId)).toEqual(all.events.slice(1, 3).map((e) => e.eventId));
      const beyond = await store.list({ kind: 'all' }, atOffset(total + 10), 10);
      expect(beyond).toEqual({ events: [], total, bounds: null, more: false });
    });

    it('totals follow inserts, access changes, deletes and the caller scope', async () => {
      const totals = async (userId: string) => ({
        anonymous: (await store.list({ kind: 'public' }, atOffset(0), 1)).total,
        creator: (await store.list({ kind: 'creator', userId }, atOffset(0), 1)).total,
        all: (await store.list({ kind: 'all' }, atOffset(0), 1)).total,
      });
      const user = newId('counter');
      const before = await totals(user);
      const id = newId();
      const created = (await store.insert(id, fields({ access: 'PRIVATE' }), user, T0))!;
      expect(await totals(user)).toEqual({
        anonymous: before.anonymous,
        creator: before.creator + 1,
        all: before.all + 1,
      });
      const opened = (await store.replace(id, created.revision, fields({ access: 'PUBLIC' }), T1))!;
      expect(await totals(user)).toEqual({
        anonymous: before.anonymous + 1,
        creator: before.creator + 1,
        all: before.all + 1,
      });
      await store.remove(id, opened.revision);
      expect(await totals(user)).toEqual(before);
    });

    it('totals equal the rows each scope can page through, also beyond one page', async () => {
      const user = newId('pager');
      // More than one page of rows of this test's own, so the check never depends on what else the
      // shared database holds (and is never skipped).
      for (let i = 0; i < 120; i++) {
        await store.insert(newId('bulk'), fields({ access: i % 10 === 0 ? 'PRIVATE' : 'PUBLIC' }), user, T0);
      }
      const scopes: ListScope[] = [{ kind: 'public' }, { kind: 'creator', userId: user }, { kind: 'all' }];
      for (const scope of scopes) {
        let rows = 0;
        let first: number | undefined;
        const seen = new Set<string>();
        // Pages of 30, so several are read backwards from the end (indexWindow): no gap, no overlap.
        for (let offset = 0; ; offset += 30) {
          const page = await store.list(scope, atOffset(offset), 30);
          first ??= page.total;
          rows += page.events.length;
          for (const event of page.events) seen.add(event.eventId);
          if (page.events.length < 30) break;
        }
        expect(first).toBeGreaterThan(100);
        expect(rows).toBe(first);
        expect(seen.size).toBe(rows);
      }
    });

    /** Every event of the scope by page numbers (other tests' rows included), in list order. */
    const everything = async (scope: ListScope): Promise<string[]> => {
      const ids: string[] = [];
      for (let offset = 0; ; offset += 100) {
        const page = await store.list(scope, atOffset(offset), 100);
        ids.push(...page.events.map((event) => event.eventId));
        if (!page.more) return ids;
      }
    };

    it('reads after and before a cursor key exactly as the numbered pages, in every scope', async () => {
      const user = newId('cursor');
      const tag = newId('keys');
      // Ties on the instant (one spelled with an offset), microseconds, and the ends of the date
      // range, where the key's instant must survive the trip through microseconds exactly.
      const dates = [
        '0001-01-01T00:00:00+14:00',
        '1899-12-31T23:59:59.999999Z',
        '1900-01-01T02:00:00+02:00',
        '1900-01-01T00:00:00Z',
        '1900-01-01T00:00:00.000001Z',
        '1900-01-01T00:00:00.000001Z',
        '9999-12-31T23:59:59.999999-12:00',
      ];
      for (let i = 0; i < 35; i++) {
        const access = i % 3 === 0 ? 'PRIVATE' : 'PUBLIC';
        await store.insert(
          `${tag}-${i}`,
          fields({ date: dates[i % dates.length], access }),
          i % 2 ? user : 'x',
          T0,
        );
      }
      const scopes: ListScope[] = [{ kind: 'public' }, { kind: 'creator', userId: user }, { kind: 'all' }];
      const ids = (events: { eventId: string }[]) => events.map((event) => event.eventId);
      for (const scope of scopes) {
        const whole = await everything(scope);
        const total = (await store.list(scope, atOffset(0), 1)).total;
        expect(whole).toHaveLength(total);
        expect(whole).toEqual(expect.arrayContaining([`${tag}-1`, `${tag}-2`]));
        // Forwards from the start by `after`, backwards from the end by `before`, pages of 7.
        const forward: string[] = [];
        let position: ListPosition = atOffset(0);
        for (;;) {
          const page = await store.list(scope, position, 7);
          expect(page.total).toBe(total);
          forward.push(...ids(page.events));
          if (page.bounds === null || !page.more) break;
          position = { kind: 'after', key: page.bounds.last };
        }
        expect(forward).toEqual(whole);
        const backward: string[][] = [];
        position = atOffset(Math.floor((total - 1) / 7) * 7);
        for (;;) {
          const page = await store.list(scope, position, 7);
          backward.unshift(ids(page.events));
          if (page.bounds === null || (position.kind === 'before' && !page.more)) break;
          position = { kind: 'before', key: page.bounds.first };
        }
        expect(backward.flat()).toEqual(whole);
      }
    });

    it('a cursor page reports the rows beyond it; after and before one key differ', async () => {
      const tag = newId('edge');
      for (const [i, date] of [
        '1000-01-01T00:00:00Z',
        '1000-01-02T00:00:00Z',
        '1000-01-03T00:00:00Z',
      ].entries()) {
        await store.insert(`${tag}-${i}`, fields({ date }), 'alice', T0);
      }
      const scope: ListScope = { kind: 'all' };
      const whole = await everything(scope);
      const at = whole.indexOf(`${tag}-1`);
      const ids = (events: { eventId: string }[]) => events.map((event) => event.eventId);
      const key = (await store.list(scope, atOffset(at), 1)).bounds?.last;
      const firstKey = (await store.list(scope, atOffset(0), 1)).bounds?.first;
      const lastKey = (await store.list(scope, atOffset(whole.length - 1), 1)).bounds?.last;
      if (key === undefined || firstKey === undefined || lastKey === undefined)
        throw new Error('rows expected');
      expect(key.eventId).toBe(`${tag}-1`);
      // The same key read after and before (the cache must key on the whole position).
      const after = await store.list(scope, { kind: 'after', key }, 2);
      const before = await store.list(scope, { kind: 'before', key }, 2);
      expect(ids(after.events)).toEqual(whole.slice(at + 1, at + 3));
      expect(ids(before.events)).toEqual(whole.slice(Math.max(0, at - 2), at));
      expect(after.more).toBe(at + 3 < whole.length);
      expect(before.more).toBe(at > 2);
      expect(after.bounds?.first.eventId).toBe(whole[at + 1]);
      expect(before.bounds?.last.eventId).toBe(whole[at - 1]);
      // Past the last row and before the first: empty, with the total, nothing beyond.
      expect(await store.list(scope, { kind: 'after', key: lastKey }, 5)).toEqual({
        events: [],
        total: whole.length,
        bounds: null,
        more: false,
      });
      expect(await store.list(scope, { kind: 'before', key: firstKey }, 5)).toMatchObject({
        events: [],
        more: false,
      });
      // A key whose row is gone still positions the page (a cursor names a place, not a row).
      const removed = await store.get(`${tag}-1`);
      expect(await store.remove(`${tag}-1`, removed?.revision ?? '')).toBe(true);
      expect(ids((await store.list(scope, { kind: 'after', key }, 1)).events)).toEqual([whole[at + 1]]);
      expect(ids((await store.list(scope, { kind: 'before', key }, 1)).events)).toEqual([whole[at - 1]]);
    });

    it('answers ping', async () => {
      await expect(store.ping()).resolves.toBeUndefined();
    });
  });
}
