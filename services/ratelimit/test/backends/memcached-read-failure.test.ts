import { type MemcachedServer, startMemcachedNodes } from '@platform/testkit/memcached';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBackend } from '../../src/backends/create.js';
import type { MemcachedBackend } from '../../src/backends/memcached.js';
import { Code } from '../../src/proto/messages.js';
import { parseBackendSettings } from '../../src/settings/backend.js';
import { StatsRegistry } from '../../src/stats/registry.js';
import { desc, harness, ok, req } from '../helpers.js';

/**
 * A memcached read that fails does what the reference's memcached cache does (its DoLimit logs the
 * GetMulti error and goes on with the items it got): the call is answered, whatever
 * BACKEND_FAILURE_MODE says; keys on the failed node count from 0, keys on a node that answered
 * keep their count; `ratelimit.memcache.multiget.__code=error` counts it, no service error does.
 */
const YAML = `
domain: d
descriptors:
  - key: k
    rate_limit: { unit: minute, requests_per_unit: 3 }
`;
const NOW = 1_000_020;
const MINUTE = Math.floor(NOW / 60) * 60;

describe('memcached read failure, as the reference', () => {
  let nodes: MemcachedServer[];
  beforeAll(async () => {
    nodes = await startMemcachedNodes(2);
  });
  afterAll(async () => {
    for (const n of nodes) await n.stop();
  });

  it('a stopped node: its keys count from 0, the other node keeps counting, the call is answered', async () => {
    const backendStats = new StatsRegistry();
    const logged: { err: unknown; keys: unknown }[] = [];
    const backend = createBackend(
      parseBackendSettings({
        BACKEND_TYPE: 'memcache',
        MEMSTORE_HOST_PORT: nodes.map((n) => n.hostPort).join(','),
        BACKEND_TIMEOUT_MS: '500',
      }),
      undefined,
      backendStats,
      { error: (fields) => logged.push(fields as { err: unknown; keys: unknown }) },
    ) as MemcachedBackend;
    // The reference's `error` mode: a failure of the call would be an error answer here.
    const h = harness(YAML, { backend, failureMode: 'error', now: NOW });
    try {
      // One value whose key lives on each node (keys are `<domain>_<key>_<value>_<window start>`).
      const values = Array.from({ length: 64 }, (_, i) => `v${i}-${process.pid}`);
      const on = (node: number) => values.find((v) => backend.nodeIndexOf(`d_k_${v}_${MINUTE}`) === node)!;
      const [live, stopped] = [on(0), on(1)];
      for (let i = 0; i < 3; i++) {
        const both = await ok(h, req('d', [desc({ k: live }), desc({ k: stopped })]));
        expect(both.overallCode).toBe(Code.OK);
      }
      const memcache = (name: string) =>
        backendStats.snapshot().counters.get(`ratelimit.memcache.${name}`) ?? 0;
      expect(memcache('multiget.__code=error')).toBe(0);

      await nodes[1]!.stop();
      const after = await h.call(req('d', [desc({ k: live }), desc({ k: stopped })]));
      expect(after.ok).toBe(true);
      if (!after.ok) return;
      // The live node's key is at 3 and goes over; the stopped node's key counts from 0 (1 of 3).
      expect(after.response.statuses.map((s) => [s.code, s.limitRemaining])).toEqual([
        [Code.OVER_LIMIT, 0],
        [Code.OK, 2],
      ]);
      expect(after.response.overallCode).toBe(Code.OVER_LIMIT);
      expect(memcache('multiget.__code=error')).toBe(1);
      expect(h.counter('ratelimit.service.call.should_rate_limit.redis_error')).toBe(0);
      expect(h.counter('ratelimit.service.call.should_rate_limit.service_error')).toBe(0);
      expect(logged).toHaveLength(1);
      expect(logged[0]!.keys).toEqual([`d_k_${live}_${MINUTE}`, `d_k_${stopped}_${MINUTE}`]);
      // A plain read (no call to answer) still reports the failure to its caller.
      await expect(
        backend.read([{ key: `d_k_${stopped}_${MINUTE}`, hits: 0, ttlSeconds: 60, perSecond: false }]),
      ).rejects.toThrow();
    } finally {
      await backend.close();
    }
  });
});
