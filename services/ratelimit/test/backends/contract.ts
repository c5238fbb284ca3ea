import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CounterBackend, CounterOp } from '../../src/backends/types.js';

/**
 * The contract every CounterBackend passes (run by one test file per implementation).
 * `advanceSeconds` moves time forward by at least that much (a fake clock, or real waiting).
 */
export interface BackendUnderTest {
  backend: CounterBackend;
  advanceSeconds(seconds: number): Promise<void>;
  close(): Promise<void>;
}

export function counterBackendContract(name: string, open: () => Promise<BackendUnderTest>): void {
  describe(`CounterBackend contract: ${name}`, () => {
    let t: BackendUnderTest;
    let prefix: string;
    const op = (key: string, hits = 1, ttlSeconds = 60, perSecond = false): CounterOp => ({
      key: `${prefix}${key}`,
      hits,
      ttlSeconds,
      perSecond,
    });

    beforeAll(async () => {
      t = await open();
      expect(await t.backend.ready()).toBe(true);
    });
    afterAll(async () => {
      await t.close();
    });

    it('increments and returns the counts after the increment, in op order', async () => {
      prefix = `c-${randomUUID()}-`;
      expect(await t.backend.increment([op('a'), op('b', 5)])).toEqual([1, 5]);
      expect(await t.backend.increment([op('b', 2), op('a', 3)])).toEqual([7, 4]);
    });

    it('hits 0 returns the current count without changing it', async () => {
      prefix = `c-${randomUUID()}-`;
      await t.backend.increment([op('a', 4)]);
      expect(await t.backend.increment([op('a', 0)])).toEqual([4]);
      expect(await t.backend.increment([op('fresh', 0)])).toEqual([0]);
    });

    it('the same key twice in one call is counted twice', async () => {
      prefix = `c-${randomUUID()}-`;
      expect(await t.backend.increment([op('a'), op('a')])).toEqual([1, 2]);
    });

    it('read returns current counts, 0 when missing, and changes nothing', async () => {
      prefix = `c-${randomUUID()}-`;
      await t.backend.increment([op('a', 3)]);
      expect(await t.backend.read([op('a'), op('missing')])).toEqual([3, 0]);
      expect(await t.backend.read([op('a')])).toEqual([3]);
    });

    it('an empty call is a no-op', async () => {
      expect(await t.backend.increment([])).toEqual([]);
      expect(await t.backend.read([])).toEqual([]);
    });

    it('per-second keys count like the others', async () => {
      prefix = `c-${randomUUID()}-`;
      // A ttl long enough that the key cannot expire between the two calls: with a 1 s ttl, memcached
      // (whose clock ticks once a second) drops the key whenever its clock ticks between them.
      expect(await t.backend.increment([op('s', 2, 10, true), op('m', 1, 60, false)])).toEqual([2, 1]);
      expect(await t.backend.increment([op('s', 2, 10, true)])).toEqual([4]);
    });

    it('a key is gone after its ttl', async () => {
      prefix = `c-${randomUUID()}-`;
      await t.backend.increment([op('short', 3, 1), op('long', 3, 60)]);
      await t.advanceSeconds(2);
      expect(await t.backend.read([op('short'), op('long')])).toEqual([0, 3]);
      expect(await t.backend.increment([op('short', 1, 1)])).toEqual([1]);
    });

    it('is healthy while reachable', () => {
      expect(t.backend.healthy()).toBe(true);
    });
  });
}
