import { describe, expect, it } from 'vitest';
import { parseSettings } from '../../src/config.js';
import { BUNDLED_EXAMPLE_ROOT } from '../../src/settings/runtime.js';

describe('settings: defaults and fail-fast errors naming the setting', () => {
  it('defaults: embedded store, bundled example (watched in place), reference ports', () => {
    const s = parseSettings({});
    expect(s.backend.type).toBe('memory');
    expect(s.runtime).toMatchObject({
      root: BUNDLED_EXAMPLE_ROOT,
      appDirectory: 'config',
      watchRoot: false,
      usingBundledExample: true,
    });
    expect(s.server).toMatchObject({
      host: '127.0.0.1',
      port: 8080,
      grpcHost: '127.0.0.1',
      grpcPort: 8081,
      nearLimitRatio: 0.8,
      workers: 1,
    });
    expect(s.backend).toMatchObject({
      expirationJitterMaxSeconds: 300,
      cacheKeyPrefix: '',
      failureMode: 'error',
      timeoutMs: 1000,
      startup: { initialIntervalMs: 1000, maxIntervalMs: 30_000, maxElapsedMs: 0 },
    });
    expect(Object.isFrozen(s.server)).toBe(true);
  });

  it('RUNTIME_ROOT given: reference default of watching the root for a symlink swap', () => {
    expect(parseSettings({ RUNTIME_ROOT: '/srv/x' }).runtime).toMatchObject({
      root: '/srv/x',
      watchRoot: true,
    });
  });

  it('KVSTORE_URL selects Redis; auth forms; per-second server; pipelining', () => {
    const s = parseSettings({
      KVSTORE_URL: 'h:1',
      KVSTORE_AUTH: 'user:p:w',
      KVSTORE_PERSECOND: 'true',
      KVSTORE_PERSECOND_URL: 'h:2',
      KVSTORE_PIPELINE_WINDOW: '150us',
    });
    expect(s.backend.type).toBe('redis');
    expect(s.backend.redis).toMatchObject({
      url: 'h:1',
      type: 'single',
      poolSize: 10,
      auth: { username: 'user', password: 'p:w' },
    });
    expect(s.backend.redis!.pipelineWindowMs).toBeCloseTo(0.15);
    expect(s.backend.redisPerSecond).toMatchObject({ url: 'h:2' });
    expect(parseSettings({ KVSTORE_URL: 'h:1', KVSTORE_AUTH: 'pw' }).backend.redis!.auth).toEqual({
      password: 'pw',
    });
  });

  it.each([
    [{ NEAR_LIMIT_RATIO: '1.5' }, /^NEAR_LIMIT_RATIO must be a number between 0 and 1, got '1.5'$/],
    [{ PORT: 'http' }, /^PORT must be an integer/],
    [{ SHADOW_MODE: 'yes' }, /^SHADOW_MODE must be true or false, got 'yes'$/],
    [{ KVSTORE_TYPE: 'ring', KVSTORE_URL: 'h:1' }, /^KVSTORE_TYPE must be one of single, sentinel, cluster/],
    [
      { KVSTORE_TYPE: 'sentinel', KVSTORE_URL: 'h:1' },
      /^KVSTORE_URL: Expected master name and a list of urls/,
    ],
    [{ BACKEND_TYPE: 'memcache' }, /^MEMSTORE_HOST_PORT or MEMSTORE_SRV must be set/],
    [
      { BACKEND_TYPE: 'memstore', MEMSTORE_HOST_PORT: 'h:1', MEMSTORE_SRV: 's' },
      /MEMSTORE_SRV are exclusive/,
    ],
    [
      { BACKEND_TYPE: 'memstore', MEMSTORE_SRV: 's', MEMSTORE_MAX_IDLE_CONNS: '-1' },
      /MEMSTORE_MAX_IDLE_CONNS/,
    ],
    [{ GRPC_MAX_CONNECTION_AGE: '10 minutes' }, /^GRPC_MAX_CONNECTION_AGE: expected a duration/],
    [{ WORKERS: '2' }, /^WORKERS above 1 needs a shared backend/],
  ])('%o is rejected', (env, message) => {
    expect(() => parseSettings(env)).toThrow(message);
  });
});
