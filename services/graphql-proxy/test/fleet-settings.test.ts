import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config.js';

describe('fleet settings', () => {
  it('defaults to files, one instance', () => {
    const { fleet } = loadConfig({}, '/tmp');
    expect(fleet).toMatchObject({
      cacheStore: 'file',
      queueStore: 'file',
      redisType: 'single',
      redisUrl: undefined,
      redisKeyPrefix: 'graphql-proxy',
      redisTimeoutMs: 1000,
      queueLeaseMs: 10_000,
      near: { maxBytes: 16 * 1024 * 1024, maxEntries: 1000, maxAgeMs: 1000 },
    });
    expect(fleet.instanceId).toMatch(/-\d+-[0-9a-f]{4}$/);
  });

  it.each([
    [{ CACHE_STORE: 'memcached' }, 'CACHE_STORE'],
    [{ QUEUE_STORE: 'redis' }, 'REDIS_URL'],
    [{ CACHE_STORE: 'redis', REDIS_URL: 'localhost:6379' }, 'REDIS_URL'],
    [{ REDIS_TYPE: 'cluster', REDIS_URL: 'a,b' }, 'REDIS_URL'],
    [{ REDIS_TYPE: 'replica' }, 'REDIS_TYPE'],
    [{ REDIS_KEY_PREFIX: 'a b' }, 'REDIS_KEY_PREFIX'],
    [{ QUEUE_LEASE_MS: '10' }, 'QUEUE_LEASE_MS'],
    [{ CACHE_NEAR_MAX_BYTES: '-1' }, 'CACHE_NEAR_MAX_BYTES'],
    [{ CACHE_NEAR_MAX_AGE_MS: 'soon' }, 'CACHE_NEAR_MAX_AGE_MS'],
    [{ INSTANCE_ID: 'x'.repeat(101) }, 'INSTANCE_ID'],
  ])('refuses %o naming %s', (env, name) => {
    expect(() => loadConfig(env, '/tmp')).toThrow(ConfigError);
    expect(() => loadConfig(env, '/tmp')).toThrow(name);
  });

  it('accepts the three topologies', () => {
    expect(
      loadConfig({ CACHE_STORE: 'redis', REDIS_URL: 'redis://127.0.0.1:6379/2' }, '/tmp').fleet.redisType,
    ).toBe('single');
    const sentinel = loadConfig(
      { QUEUE_STORE: 'redis', REDIS_TYPE: 'sentinel', REDIS_URL: 'mymaster,127.0.0.1:26379,[::1]:26380' },
      '/tmp',
    );
    expect(sentinel.fleet.redisType).toBe('sentinel');
    const cluster = loadConfig(
      { QUEUE_STORE: 'redis', REDIS_TYPE: 'cluster', REDIS_URL: '127.0.0.1:7000,127.0.0.1:7001' },
      '/tmp',
    );
    expect(cluster.fleet.redisType).toBe('cluster');
  });
});
