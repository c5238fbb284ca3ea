import { describe, expect, it } from 'vitest';
import { MemoryBackend } from '../../src/backends/memory.js';
import type { CounterOp } from '../../src/backends/types.js';
import { LocalOverLimitCache } from '../../src/limiter/local-cache.js';
import { Code } from '../../src/proto/messages.js';
import { StatsRegistry } from '../../src/stats/registry.js';
import { desc, harness, ok, req } from '../helpers.js';

/** The in-process store, recording every call it gets. */
class RecordingBackend extends MemoryBackend {
  /** Keys as `key` or, for an increment by 0 (INCRBY key 0), `key+0`. */
  calls: { kind: 'increment' | 'read'; keys: string[] }[] = [];
  /** Both ways in (the limiter's synchronous one and `increment`) end here. */
  override incrementSync(ops: readonly CounterOp[]) {
    this.calls.push({ kind: 'increment', keys: ops.map((o) => (o.hits === 0 ? `${o.key}+0` : o.key)) });
    return super.incrementSync(ops);
  }
  override read(ops: readonly CounterOp[]) {
    this.calls.push({ kind: 'read', keys: ops.map((o) => o.key) });
    return super.read(ops);
  }
}

const YAML = `
domain: d
descriptors:
  - key: a
    rate_limit: { unit: minute, requests_per_unit: 2 }
  - key: b
    rate_limit: { unit: minute, requests_per_unit: 100 }
`;
const NOW = 1_000_020;
const S = (k: string, stat: string) => `ratelimit.service.rate_limit.d.${k}.${stat}`;

describe('local over-limit cache (LOCAL_CACHE_SIZE_IN_BYTES)', () => {
  it('after a key goes over, later hits in the window skip the backend and count over_limit_with_local_cache', async () => {
    let clock = NOW;
    const backend = new RecordingBackend({ now: () => clock * 1000 });
    const h = harness(YAML, { now: NOW, backend, localCacheBytes: 10_000 });
    for (let i = 0; i < 3; i++) await ok(h, req('d', [desc({ a: 'x' })]));
    expect(backend.calls).toHaveLength(3);
    const r = await ok(h, req('d', [desc({ a: 'x' }), desc({ b: 'x' })]));
    expect(r.statuses[0]).toMatchObject({
      code: Code.OVER_LIMIT,
      limitRemaining: 0,
      durationUntilResetSeconds: 60,
    });
    expect(backend.calls.at(-1)!.keys).toEqual([`d_b_x_${NOW}`]);
    expect(h.counter(S('a', 'over_limit_with_local_cache'))).toBe(1);
    expect(h.counter(S('a', 'over_limit'))).toBe(2);
    expect(h.counter(S('a', 'total_hits'))).toBe(4);
    // Next window: the backend is asked again.
    h.clock.now += 60;
    clock += 60;
    expect((await ok(h, req('d', [desc({ a: 'x' })]))).overallCode).toBe(Code.OK);
  });

  it('is bounded by its byte size, evicting the oldest keys', () => {
    const cache = new LocalOverLimitCache(300);
    for (let i = 0; i < 10; i++) cache.add(`key-${i}-${'x'.repeat(20)}`, 100);
    expect(cache.size()).toBeLessThanOrEqual(3);
    expect(cache.has(`key-9-${'x'.repeat(20)}`, 50)).toBe(true);
    expect(cache.has(`key-0-${'x'.repeat(20)}`, 50)).toBe(false);
    expect(cache.has(`key-9-${'x'.repeat(20)}`, 100)).toBe(false);
  });

  it("keeps the reference's ratelimit.localcache.* gauges", () => {
    const registry = new StatsRegistry();
    const cache = new LocalOverLimitCache(300, registry);
    const gauges = () =>
      Object.fromEntries(
        [...registry.snapshot().gauges].map(([k, v]) => [k.replace('ratelimit.localcache.', ''), v]),
      );
    for (let i = 0; i < 4; i++) cache.add(`key-${i}-${'x'.repeat(20)}`, 100, 10);
    cache.add(`key-3-${'x'.repeat(20)}`, 100, 20);
    cache.has(`key-3-${'x'.repeat(20)}`, 30);
    cache.has('absent', 30);
    cache.has(`key-3-${'x'.repeat(20)}`, 100);
    expect(gauges()).toEqual({
      evacuateCount: 2, // 116 bytes a key: two fit in 300
      expiredCount: 1,
      entryCount: 1,
      averageAccessTime: 10,
      hitCount: 1,
      missCount: 2,
      lookupCount: 3,
      overwriteCount: 1,
    });
  });
});

describe('STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT', () => {
  it('when one key would go over, the other keys of the request are not incremented (INCRBY 0), and are decided as the reference does', async () => {
    const backend = new RecordingBackend({ now: () => NOW * 1000 });
    const h = harness(YAML, { now: NOW, backend, stopIncrement: true });
    await ok(h, req('d', [desc({ a: 'x' }), desc({ b: 'x' })], 2));
    expect(backend.calls.map((c) => c.kind)).toEqual(['read', 'increment']);
    const r = await ok(h, req('d', [desc({ a: 'x' }), desc({ b: 'x' })]));
    expect(r.overallCode).toBe(Code.OVER_LIMIT);
    expect(r.statuses[1]).toMatchObject({ code: Code.OK, limitRemaining: 98 });
    expect(backend.calls.at(-1)).toEqual({ kind: 'increment', keys: [`d_a_x_${NOW}`, `d_b_x_${NOW}+0`] });
    // The reference decides a key left as it is with before = count - hits: the hit still counts
    // in total_hits and within_limit.
    expect(h.registry.snapshot().counters.get(S('b', 'within_limit'))).toBe(3);
    expect(h.registry.snapshot().counters.get(S('b', 'total_hits'))).toBe(3);
    const [a, b] = await backend.read([
      { key: `d_a_x_${NOW}`, hits: 0, ttlSeconds: 60, perSecond: false },
      { key: `d_b_x_${NOW}`, hits: 0, ttlSeconds: 60, perSecond: false },
    ]);
    expect([a, b]).toEqual([3, 2]);
  });

  it('with a key over its limit in the local cache, the other keys are not incremented and nothing is read', async () => {
    const backend = new RecordingBackend({ now: () => NOW * 1000 });
    const h = harness(YAML, { now: NOW, backend, stopIncrement: true, localCacheBytes: 10_000 });
    await ok(h, req('d', [desc({ a: 'x' })], 3)); // a goes over: remembered by the local cache
    backend.calls = [];
    const r = await ok(h, req('d', [desc({ a: 'x' }), desc({ b: 'x' })]));
    expect(r.overallCode).toBe(Code.OVER_LIMIT);
    expect(r.statuses[1]).toMatchObject({ code: Code.OK, limitRemaining: 100 });
    expect(backend.calls).toEqual([{ kind: 'increment', keys: [`d_b_x_${NOW}+0`] }]);
  });

  it('without the setting every key is incremented in one call', async () => {
    const backend = new RecordingBackend({ now: () => NOW * 1000 });
    const h = harness(YAML, { now: NOW, backend });
    await ok(h, req('d', [desc({ a: 'x' }), desc({ b: 'x' })], 3));
    expect(backend.calls).toEqual([{ kind: 'increment', keys: [`d_a_x_${NOW}`, `d_b_x_${NOW}`] }]);
  });
});
