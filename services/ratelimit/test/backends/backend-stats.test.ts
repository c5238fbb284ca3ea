import { setTimeout as sleep } from 'node:timers/promises';
import { type MemcachedServer, startMemcached } from '@platform/testkit/memcached';
import { type RedisServer, startRedis } from '@platform/testkit/redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBackend } from '../../src/backends/create.js';
import { parseSettings } from '../../src/config.js';
import { StatsRegistry } from '../../src/stats/registry.js';

/** The reference's backend stat families: `ratelimit.redis_pool.*` and `ratelimit.memcache.*`. */
const op = (key: string, hits = 1) => ({ key, hits, ttlSeconds: 60, perSecond: false });

/** Polls until `check` holds (the backends update some counters and write some keys after answering). */
async function until(
  what: string,
  check: () => boolean | Promise<boolean>,
  timeoutMs = 5_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

describe('backend stats as the reference names them', () => {
  let redis: RedisServer;
  let memcached: MemcachedServer;
  beforeAll(async () => {
    [redis, memcached] = await Promise.all([startRedis(), startMemcached()]);
  });
  afterAll(async () => {
    await Promise.all([redis.stop(), memcached.stop()]);
  });

  it('ratelimit.redis_pool.cx_active, cx_total, cx_local_close', async () => {
    const registry = new StatsRegistry();
    const backend = createBackend(
      parseSettings({
        REDIS_SOCKET_TYPE: 'tcp',
        REDIS_URL: `${redis.host}:${redis.port}`,
        REDIS_POOL_SIZE: '3',
      }).backend,
      undefined,
      registry,
    );
    expect(await backend.ready()).toBe(true);
    const snap = registry.snapshot();
    expect(snap.gauges.get('ratelimit.redis_pool.cx_active')).toBe(3);
    expect(snap.counters.get('ratelimit.redis_pool.cx_total')).toBe(3);
    await backend.close();
    await until(
      'the pool to close',
      () => registry.snapshot().gauges.get('ratelimit.redis_pool.cx_active') === 0,
    );
    expect(registry.snapshot().counters.get('ratelimit.redis_pool.cx_local_close')).toBe(3);
  });

  it('ratelimit.memcache.{multiget,increment,add}.__code=... and keys_requested / keys_found', async () => {
    const registry = new StatsRegistry();
    const backend = createBackend(
      parseSettings({ BACKEND_TYPE: 'memcache', MEMCACHE_HOST_PORT: memcached.hostPort }).backend,
      undefined,
      registry,
    );
    const key = `stats-${process.pid}-${Date.now()}`;
    try {
      const counter = (name: string) => registry.snapshot().counters.get(`ratelimit.memcache.${name}`) ?? 0;
      await backend.increment([op(key)]); // miss: incr NOT_FOUND, add STORED
      // The add is sent after the answer: the next increment must find the key stored.
      await until('the add', () => counter('add.__code=success') === 1);
      await backend.increment([op(key), op(`${key}-other`, 0)]); // found: incr succeeds
      await until('the second round', () => counter('increment.__code=success') === 1);
      const get = counter;
      expect(get('multiget.__code=success')).toBe(2);
      expect(get('keys_requested')).toBe(3);
      expect(get('keys_found')).toBe(1);
      expect(get('increment.__code=miss')).toBe(1);
      expect(get('add.__code=success')).toBe(1);
      expect(get('increment.__code=success')).toBe(1);
    } finally {
      await backend.close();
    }
  });
});
