import { randomUUID } from 'node:crypto';
import { type RedisServer, startRedis } from '@platform/testkit/redis';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBackend } from '../../src/backends/create.js';
import { ALGORITHM_SCRIPT_SHA } from '../../src/backends/redis-scripts.js';
import type { CounterBackend } from '../../src/backends/types.js';
import { Code } from '../../src/proto/messages.js';
import { parseBackendSettings } from '../../src/settings/backend.js';
import { desc, harness, ok, req } from '../helpers.js';
import { countingProxy } from './counting-proxy.js';

const YAML = `
domain: d
descriptors:
  - key: f
    rate_limit: { unit: minute, requests_per_unit: 5 }
  - key: s
    rate_limit: { unit: minute, requests_per_unit: 3, algorithm: sliding_window }
  - key: t
    rate_limit: { unit: second, unit_multiplier: 10, requests_per_unit: 10, algorithm: token_bucket, burst: 4 }
`;

async function commandCalls(raw: Redis, command: string): Promise<number> {
  const info = await raw.info('commandstats');
  const m = new RegExp(`cmdstat_${command}:calls=(\\d+)`).exec(info);
  return m ? Number(m[1]) : 0;
}

describe('redis: sliding window and token bucket in one script call', () => {
  let redis: RedisServer;
  let raw: Redis;
  beforeAll(async () => {
    redis = await startRedis({ fresh: true });
    raw = new Redis({ host: redis.host, port: redis.port });
  });
  afterAll(async () => {
    raw.disconnect();
    await redis.stop();
  });

  function backendVia(port: number): CounterBackend {
    return createBackend(parseBackendSettings({ KVSTORE_URL: `127.0.0.1:${port}`, KVSTORE_POOL_SIZE: '1' }));
  }

  it('a request mixing the three algorithms is one write and one EVALSHA; keys hash-tagged by descriptor', async () => {
    const proxy = await countingProxy(redis);
    const backend = backendVia(proxy.port);
    try {
      expect(await backend.ready()).toBe(true);
      const prefix = `p${randomUUID().slice(0, 8)}:`;
      const h = harness(YAML, { backend, cacheKeyPrefix: prefix });
      const nowMs = 1_700_000_123_456;
      h.clock.ms = nowMs;
      h.clock.now = Math.floor(nowMs / 1000);
      const request = req('d', [desc({ f: 'x' }), desc({ s: 'x' }), desc({ t: 'x' })]);
      await ok(h, request); // the script is cached by the server from here on
      const writes = proxy.writes();
      const evalsha = await commandCalls(raw, 'evalsha');
      const r = await ok(h, request);
      expect(proxy.writes() - writes).toBe(1);
      expect((await commandCalls(raw, 'evalsha')) - evalsha).toBe(1);
      expect(r.statuses.map((s) => s.limitRemaining)).toEqual([3, 1, 2]);
      // Sliding window: a hash of sub-window index -> count (6 s sub-windows of the minute).
      const sub = String(Math.floor(nowMs / 6000));
      expect(await raw.hgetall(`${prefix}{d_s_x_}sw60`)).toEqual({ [sub]: '2' });
      const swTtl = await raw.pttl(`${prefix}{d_s_x_}sw60`);
      expect(swTtl).toBeGreaterThan(60_000);
      expect(swTtl).toBeLessThanOrEqual(66_000);
      // Token bucket: scaled tokens (2 of 4 left, 10 s window: 20000) and their time.
      expect(await raw.hgetall(`${prefix}{d_t_x_}tb10`)).toEqual({ t: '20000', a: String(nowMs) });
      // Full again in 2 tokens x 1 s each.
      expect(await raw.pttl(`${prefix}{d_t_x_}tb10`)).toBeLessThanOrEqual(2000);
    } finally {
      await backend.close();
      proxy.close();
    }
  });

  it('after SCRIPT FLUSH (NOSCRIPT) the script is sent again and counting goes on', async () => {
    const backend = backendVia(redis.port);
    try {
      expect(await backend.ready()).toBe(true);
      const h = harness(YAML, { backend });
      h.clock.ms = 1_700_000_200_000;
      const value = randomUUID();
      expect((await ok(h, req('d', [desc({ s: value })]))).statuses[0]!.limitRemaining).toBe(2);
      await raw.script('FLUSH');
      expect(await raw.script('EXISTS', ALGORITHM_SCRIPT_SHA)).toEqual([0]);
      const evals = await commandCalls(raw, 'eval');
      expect((await ok(h, req('d', [desc({ s: value })]))).statuses[0]!.limitRemaining).toBe(1);
      expect((await commandCalls(raw, 'eval')) - evals).toBe(1);
      expect(await raw.script('EXISTS', ALGORITHM_SCRIPT_SHA)).toEqual([1]);
      expect((await ok(h, req('d', [desc({ s: value })]))).statuses[0]!.limitRemaining).toBe(0);
      expect((await ok(h, req('d', [desc({ s: value })]))).overallCode).toBe(Code.OVER_LIMIT);
      expect((await commandCalls(raw, 'eval')) - evals).toBe(1);
    } finally {
      await backend.close();
    }
  });

  it('a refused call changes nothing stored; a stale sub-window is dropped when met', async () => {
    const backend = backendVia(redis.port);
    try {
      expect(await backend.ready()).toBe(true);
      const h = harness(YAML, { backend });
      const value = randomUUID();
      const key = `{d_s_${value}_}sw60`;
      h.clock.ms = 1_700_000_400_000;
      for (let i = 0; i < 3; i++) await ok(h, req('d', [desc({ s: value })]));
      const before = await raw.hgetall(key);
      expect((await ok(h, req('d', [desc({ s: value })]))).overallCode).toBe(Code.OVER_LIMIT);
      expect(await raw.hgetall(key)).toEqual(before);
      h.clock.ms += 120_000; // every counted sub-window is stale now
      expect((await ok(h, req('d', [desc({ s: value })]))).statuses[0]!.limitRemaining).toBe(2);
      expect(Object.keys(await raw.hgetall(key))).toEqual([String(Math.floor(h.clock.ms / 6000))]);
    } finally {
      await backend.close();
    }
  });
});
