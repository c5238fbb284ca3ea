import { describe, expect, it } from 'vitest';
import type { AnswerCache } from '../../src/cache/answer-cache.js';
import { etagOf } from '../../src/cache/response-cache.js';

/** A cache to test, bounded to `maxEntries`, empty, with a clock the suite moves. */
export type OpenCache = (maxEntries: number, clock: () => number) => Promise<AnswerCache>;

const key = (n: number) => n.toString(16).padStart(64, '0');
const body = (n: number) => `{"data":{"n":${n}}}`;

/**
 * One contract for every response cache (the file-backed ResponseCache and the fleet's
 * RedisResponseCache): what the request path, the replayer and the purge API rely on.
 */
export function answerCacheContract(name: string, open: OpenCache): void {
  describe(`AnswerCache contract: ${name}`, () => {
    const now = 1_700_000_000_000;
    const clock = () => now;

    it('reads back what it stored: body, tags, time, own lifetime and a strong ETag', async () => {
      const cache = await open(100, clock);
      await cache.put(key(1), body(1), ['Post', 'id:1'], now - 5000, false, 30_000);
      const got = await cache.get(key(1));
      expect(got).toMatchObject({ key: key(1), storedAt: now - 5000, invalidated: false, ttlMs: 30_000 });
      expect([...(got?.tags ?? [])]).toEqual(['Post', 'id:1']);
      expect(got?.body?.toString()).toBe(body(1));
      expect(got?.etag).toBe(etagOf(body(1)));
      await cache.put(key(2), body(2), [], now);
      expect((await cache.get(key(2)))?.ttlMs).toBeUndefined();
      expect(await cache.get(key(3))).toBeUndefined();
    });

    it('overwrites an entry with its new version', async () => {
      const cache = await open(100, clock);
      await cache.put(key(1), body(1), ['Post'], now);
      await cache.put(key(1), body(11), ['Category'], now + 1);
      const got = await cache.get(key(1));
      expect(got?.body?.toString()).toBe(body(11));
      expect([...(got?.tags ?? [])]).toEqual(['Category']);
      expect(await cache.sizes()).toEqual({ entries: 1, bytes: Buffer.byteLength(body(11)) });
    });

    it('invalidates the entries sharing a tag, keeps them (for stale-if-error), and moves the epoch', async () => {
      const cache = await open(100, clock);
      await cache.put(key(1), body(1), ['Post', 'id:1'], now);
      await cache.put(key(2), body(2), ['Post', 'id:2'], now);
      await cache.put(key(3), body(3), ['Category'], now);
      const before = cache.epoch;
      expect(await cache.invalidate(new Set(['id:2']))).toBe(1);
      expect(cache.epoch).not.toBe(before);
      expect((await cache.get(key(1)))?.invalidated).toBe(false);
      expect((await cache.get(key(2)))?.invalidated).toBe(true);
      expect(await cache.invalidate(new Set(['Post']))).toBe(1);
      expect(await cache.invalidate(new Set(['*']))).toBe(1);
      expect((await cache.get(key(3)))?.invalidated).toBe(true);
      expect((await cache.get(key(2)))?.body?.toString()).toBe(body(2));
    });

    it('stores an answer as invalidated when told it raced with an invalidation', async () => {
      const cache = await open(100, clock);
      await cache.put(key(1), body(1), ['Post'], now, true);
      expect((await cache.get(key(1)))?.invalidated).toBe(true);
    });

    it('purges by key, by type, by type and id, and everything: gone, not even stale', async () => {
      const cache = await open(100, clock);
      await cache.put(key(1), body(1), ['Post', 'id:1'], now);
      await cache.put(key(2), body(2), ['Post', 'id:2'], now);
      await cache.put(key(3), body(3), ['Category', 'id:3'], now);
      await cache.put(key(4), body(4), ['User'], now);
      await cache.put(key(5), body(5), ['Tag'], now);
      const before = cache.epoch;
      expect(await cache.purgeBy({ kind: 'key', key: key(5) })).toBe(1);
      expect(cache.epoch).not.toBe(before);
      expect(await cache.purgeBy({ kind: 'key', key: key(5) })).toBe(0);
      expect(await cache.purgeBy({ kind: 'type', type: 'Post', id: '2' })).toBe(1);
      expect(await cache.get(key(2))).toBeUndefined();
      expect(await cache.get(key(1))).toBeDefined();
      expect(await cache.purgeBy({ kind: 'type', type: 'Post' })).toBe(1);
      expect(await cache.purgeBy({ kind: 'type', type: 'Nothing' })).toBe(0);
      expect((await cache.sizes()).entries).toBe(2);
      expect(await cache.purgeBy({ kind: 'all' })).toBe(2);
      expect(await cache.get(key(3))).toBeUndefined();
      expect(await cache.sizes()).toEqual({ entries: 0, bytes: 0 });
    });

    it('holds at most maxEntries', async () => {
      const cache = await open(3, clock);
      for (let n = 1; n <= 5; n += 1) await cache.put(key(n), body(n), ['Post'], now + n);
      expect((await cache.sizes()).entries).toBe(3);
      expect(await cache.get(key(5))).toBeDefined();
    });
  });
}
