import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { type RedisServer, startRedis } from '@platform/testkit/redis';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBackend } from '../../src/backends/create.js';
import type { CounterBackend } from '../../src/backends/types.js';
import { RateLimiter } from '../../src/limiter/rate-limiter.js';
import { RateLimitService } from '../../src/limiter/service.js';
import { Code } from '../../src/proto/messages.js';
import { parseBackendSettings } from '../../src/settings/backend.js';
import { StatsRegistry } from '../../src/stats/registry.js';
import { configOf, desc, req } from '../helpers.js';
import { countingProxy } from './counting-proxy.js';

const YAML = `
domain: d
descriptors:
  - key: a
    rate_limit: { unit: minute, requests_per_unit: 2 }
  - key: b
    rate_limit: { unit: second, requests_per_unit: 5 }
  - key: c
    descriptors:
      - key: n
        rate_limit: { unit: hour, requests_per_unit: 9 }
`;

function serviceOver(backend: CounterBackend, prefix: string, nowSeconds: number, jitter = 0, random = 0) {
  const registry = new StatsRegistry();
  const config = configOf(registry, YAML);
  return new RateLimitService({
    limiter: new RateLimiter({
      backend,
      nearLimitRatio: 0.8,
      expirationJitterMaxSeconds: jitter,
      random: () => random,
    }),
    registry,
    cacheKeyPrefix: prefix,
    currentConfig: () => config,
    nowSeconds: () => nowSeconds,
    failureMode: 'error',
    globalShadowMode: false,
    headers: undefined,
    logger: pino({ level: 'silent' }),
  });
}

describe('redis backend specifics', () => {
  let redis: RedisServer;
  let raw: Redis;
  beforeAll(async () => {
    redis = await startRedis();
    raw = new Redis({ host: redis.host, port: redis.port });
  });
  afterAll(async () => {
    raw.disconnect();
    await redis.stop();
  });

  it('one round trip per request; INCRBY+EXPIRE per descriptor; reference key layout and expiry with jitter', async () => {
    const proxy = await countingProxy(redis);
    const backend = createBackend(
      parseBackendSettings({ KVSTORE_URL: `127.0.0.1:${proxy.port}`, KVSTORE_POOL_SIZE: '1' }),
    );
    try {
      expect(await backend.ready()).toBe(true);
      const prefix = `t${randomUUID().slice(0, 8)}:`;
      const now = 1_700_000_123;
      const service = serviceOver(backend, prefix, now, 300, 0.5);
      const before = proxy.writes();
      const result = await service.shouldRateLimit(
        req('d', [
          desc({ a: 'x' }),
          desc({ b: 'y' }),
          desc([
            ['c', 'p'],
            ['n', 'q'],
          ]),
        ]),
      );
      expect(proxy.writes() - before).toBe(1);
      expect(result.ok && result.response.overallCode).toBe(Code.OK);
      const minute = Math.floor(now / 60) * 60;
      const hour = Math.floor(now / 3600) * 3600;
      expect(await raw.get(`${prefix}d_a_x_${minute}`)).toBe('1');
      expect(await raw.get(`${prefix}d_b_y_${now}`)).toBe('1');
      expect(await raw.get(`${prefix}d_c_p_n_q_${hour}`)).toBe('1');
      // EXPIRE = divider + floor(0.5 * 300)
      const ttl = await raw.ttl(`${prefix}d_a_x_${minute}`);
      expect(ttl).toBeGreaterThan(60 + 150 - 5);
      expect(ttl).toBeLessThanOrEqual(60 + 150);
      const again = await service.shouldRateLimit(req('d', [desc({ a: 'x' })], 2));
      expect(again.ok && again.response.statuses[0]!.code).toBe(Code.OVER_LIMIT);
      expect(await raw.get(`${prefix}d_a_x_${minute}`)).toBe('3');
    } finally {
      await backend.close();
      proxy.close();
    }
  });

  /**
   * A backend with a pool of two connections through a byte-counting proxy; `run` gets the service
   * and returns the calls' results; then how many connections carried bytes meanwhile.
   */
  async function connectionsUsed(
    now: number,
    run: (service: ReturnType<typeof serviceOver>) => Promise<unknown>,
  ): Promise<{ used: number; prefix: string }> {
    const proxy = await countingProxy(redis);
    const backend = createBackend(
      parseBackendSettings({ KVSTORE_URL: `127.0.0.1:${proxy.port}`, KVSTORE_POOL_SIZE: '2' }),
    );
    try {
      expect(await backend.ready()).toBe(true);
      const prefix = `t${randomUUID().slice(0, 8)}:`;
      const before = proxy.bytesPerConnection();
      expect(before).toHaveLength(2);
      await run(serviceOver(backend, prefix, now));
      const sent = proxy.bytesPerConnection().map((n, i) => n - before[i]!);
      return { used: sent.filter((n) => n > 0).length, prefix };
    } finally {
      await backend.close();
      proxy.close();
    }
  }

  it('calls of one event-loop turn share one pooled connection (auto-pipelining), each answered in order', async () => {
    let codes: (Code | 'failed')[] = [];
    const { used, prefix } = await connectionsUsed(1_700_000_123, async (service) => {
      // Ten calls started in the same turn; the 5-per-second rule lets exactly five through.
      const results = await Promise.all(
        Array.from({ length: 10 }, () => service.shouldRateLimit(req('d', [desc({ b: 'same' })]))),
      );
      codes = results.map((r) => (r.ok ? r.response.statuses[0]!.code : 'failed'));
    });
    expect(codes.filter((c) => c === Code.OK)).toHaveLength(5);
    expect(codes.filter((c) => c === Code.OVER_LIMIT)).toHaveLength(5);
    // Round-robin per call would have used both connections; the turn's batch uses one.
    expect(used).toBe(1);
    expect(await raw.get(`${prefix}d_b_same_1700000123`)).toBe('10');
  });

  it('calls arriving in separate callbacks of one loop iteration share one connection too (as gRPC streams arrive)', async () => {
    // grpc-js hands each HTTP/2 stream to JavaScript in a callback of its own, after which Node runs
    // the tick queue: a batch flushed on process.nextTick ended after every call (one write per call).
    // Separate setImmediate callbacks of one check phase arrive the same way.
    let allOk = false;
    const { used, prefix } = await connectionsUsed(1_700_000_456, async (service) => {
      const results = await Promise.all(
        Array.from(
          { length: 10 },
          () =>
            new Promise<Awaited<ReturnType<typeof service.shouldRateLimit>>>((resolve) =>
              setImmediate(() => resolve(service.shouldRateLimit(req('d', [desc({ b: 'apart' })])))),
            ),
        ),
      );
      allOk = results.every((r) => r.ok);
    });
    expect(allOk).toBe(true);
    expect(used).toBe(1);
    expect(await raw.get(`${prefix}d_b_apart_1700000456`)).toBe('10');
  });

  it('KVSTORE_AUTH with a password and with user:password', async () => {
    const secured = await startRedis({
      args: ['--requirepass', 'pw1'],
      aclUsers: ['user app on >pw2 ~* +@all'],
    });
    try {
      for (const auth of ['pw1', 'app:pw2']) {
        const backend = createBackend(
          parseBackendSettings({ KVSTORE_URL: `127.0.0.1:${secured.port}`, KVSTORE_AUTH: auth }),
        );
        expect(await backend.ready()).toBe(true);
        expect(
          await backend.increment([{ key: `auth-${auth}`, hits: 1, ttlSeconds: 10, perSecond: false }]),
        ).toEqual([1]);
        await backend.close();
      }
      const wrong = createBackend(
        parseBackendSettings({
          KVSTORE_URL: `127.0.0.1:${secured.port}`,
          KVSTORE_AUTH: 'nope',
          BACKEND_TIMEOUT_MS: '300',
        }),
      );
      await expect(
        wrong.increment([{ key: 'x', hits: 1, ttlSeconds: 10, perSecond: false }]),
      ).rejects.toThrow();
      await wrong.close();
    } finally {
      await secured.stop();
    }
  });

  it('KVSTORE_SOCKET_TYPE=unix', async () => {
    const socket = join(mkdtempSync(join(tmpdir(), 'rl-sock-')), 'redis.sock');
    const server = await startRedis({ args: ['--unixsocket', socket, '--unixsocketperm', '700'] });
    try {
      const backend = createBackend(
        parseBackendSettings({ KVSTORE_URL: socket, KVSTORE_SOCKET_TYPE: 'unix', KVSTORE_POOL_SIZE: '1' }),
      );
      expect(await backend.ready()).toBe(true);
      expect(await backend.increment([{ key: 'u', hits: 2, ttlSeconds: 10, perSecond: false }])).toEqual([2]);
      await backend.close();
    } finally {
      await server.stop();
    }
  });

  it('an outage fails calls fast, marks the backend unhealthy (active check), and recovers', async () => {
    const server = await startRedis({ fresh: true });
    const backend = createBackend(
      parseBackendSettings({
        KVSTORE_URL: `127.0.0.1:${server.port}`,
        KVSTORE_POOL_SIZE: '1',
        KVSTORE_HEALTH_CHECK_ACTIVE_CONNECTION: 'true',
        BACKEND_TIMEOUT_MS: '500',
      }),
    );
    const changes: boolean[] = [];
    backend.onHealthChange((h) => changes.push(h));
    const op = { key: 'o', hits: 1, ttlSeconds: 10, perSecond: false };
    try {
      expect(await backend.ready()).toBe(true);
      expect(await backend.increment([op])).toEqual([1]);
      await server.stop();
      while (backend.healthy()) await sleep(50);
      await expect(backend.increment([op])).rejects.toThrow();
      await server.restart();
      while (!backend.healthy()) await sleep(50);
      expect(await backend.increment([op])).toEqual([1]);
      expect(changes).toEqual([false, true]);
    } finally {
      await backend.close();
      await server.stop();
    }
  });
});
