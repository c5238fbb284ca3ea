import { describe, expect, it } from 'vitest';
import { effectiveClusterParallelism } from '../../src/backends/create.js';
import { parseSettings } from '../../src/config.js';

/**
 * The reference's environment (envoyproxy/ratelimit src/settings/settings.go and its
 * settings_test.go) starts this service unchanged: its names are aliases of ours, its defaults
 * apply where the spec is silent, and nothing falls back to the in-process store silently.
 */
describe('reference setting names as aliases', () => {
  it('REDIS_* configure the Redis backend exactly as KVSTORE_* do', () => {
    const s = parseSettings({
      REDIS_SOCKET_TYPE: 'tcp',
      REDIS_URL: 'redis:6379',
      REDIS_TYPE: 'SINGLE',
      REDIS_POOL_SIZE: '4',
      REDIS_AUTH: 'u:p',
      REDIS_PIPELINE_WINDOW: '150us',
      REDIS_PERSECOND: 'true',
      REDIS_PERSECOND_URL: 'persecond:6379',
      REDIS_PERSECOND_SOCKET_TYPE: 'tcp',
      REDIS_PERSECOND_TIMEOUT: '2s',
      REDIS_HEALTH_CHECK_ACTIVE_CONNECTION: 'true',
    });
    expect(s.backend.type).toBe('redis');
    expect(s.backend.redis).toMatchObject({
      url: 'redis:6379',
      type: 'single',
      socketType: 'tcp',
      poolSize: 4,
      auth: { username: 'u', password: 'p' },
      timeoutMs: 10_000,
      clusterPipelineParallelism: 1,
    });
    expect(s.backend.redis!.pipelineWindowMs).toBeCloseTo(0.15);
    expect(s.backend.redisPerSecond).toMatchObject({ url: 'persecond:6379', timeoutMs: 2000 });
    expect(s.backend.healthCheckActiveConnection).toBe(true);
  });

  it('MEMCACHE_* configure memcached with BACKEND_TYPE=memcache', () => {
    const s = parseSettings({
      BACKEND_TYPE: 'memcache',
      MEMCACHE_HOST_PORT: 'a:11211,b:11211',
      MEMCACHE_MAX_IDLE_CONNS: '7',
      MEMCACHE_TLS: 'true',
      MEMCACHE_TLS_SKIP_HOSTNAME_VERIFICATION: 'true',
    });
    expect(s.backend.type).toBe('memcache');
    expect(s.backend.memcache).toMatchObject({
      hostPorts: 'a:11211,b:11211',
      maxIdleConns: 7,
      tls: true,
      tlsFiles: { skipHostnameVerification: true },
    });
  });

  it('USE_PROMETHEUS / PROMETHEUS_* and USE_DOG_STATSD / DOG_STATSD_MOGRIFIER_* set ours', () => {
    const s = parseSettings({
      USE_PROMETHEUS: 'true',
      PROMETHEUS_ADDR: '127.0.0.1:9191',
      PROMETHEUS_PATH: '/m',
      PROMETHEUS_RESPONSE_TIME_AS_MILLISECONDS: 'true',
      USE_DOG_STATSD: 'true',
      USE_DOG_STATSD_MOGRIFIERS: 'TAG',
      DOG_STATSD_MOGRIFIER_TAG_PATTERN: '^ratelimit\\.service\\.rate_limit\\.(.*)\\.total_hits$',
      DOG_STATSD_MOGRIFIER_TAG_NAME: 'ratelimit.total_hits',
      DOG_STATSD_MOGRIFIER_TAG_TAGS: 'key:$1',
    });
    expect(s.observability.pullMetrics).toMatchObject({
      enabled: true,
      host: '127.0.0.1',
      port: 9191,
      path: '/m',
      responseTimeAsMilliseconds: true,
    });
    expect(s.observability.stats.useExtStatsd).toBe(true);
    expect(s.observability.stats.mogrifiers).toMatchObject([
      { name: 'TAG', newName: 'ratelimit.total_hits', tags: [['key', '$1']] },
    ]);
  });

  it('an alias and our name with different values is an error naming both; equal values are fine', () => {
    expect(() => parseSettings({ REDIS_URL: 'a:1', KVSTORE_URL: 'b:1' })).toThrow(
      "KVSTORE_URL and REDIS_URL (the reference's name for it) are both set, to different values ('b:1' and 'a:1'): set only one",
    );
    expect(() => parseSettings({ USE_PROMETHEUS: 'true', USE_PULLMETRICS: 'false' })).toThrow(
      /USE_PULLMETRICS and USE_PROMETHEUS/,
    );
    expect(parseSettings({ REDIS_URL: 'a:1', KVSTORE_URL: 'a:1' }).backend.redis!.url).toBe('a:1');
  });

  it('an error about a value read through an alias names the alias', () => {
    expect(() => parseSettings({ REDIS_URL: 'a:1', REDIS_POOL_SIZE: 'many' })).toThrow(
      /^REDIS_POOL_SIZE \(KVSTORE_POOL_SIZE\) must be an integer/,
    );
  });
});

describe('no silent fallback to the in-process store', () => {
  it('any Redis setting selects Redis; any memcached setting selects memcached', () => {
    expect(parseSettings({ REDIS_TYPE: 'single' }).backend.type).toBe('redis');
    expect(parseSettings({ KVSTORE_POOL_SIZE: '3' }).backend.type).toBe('redis');
    expect(parseSettings({ MEMCACHE_SRV: '_m._tcp.x' }).backend.type).toBe('memcache');
    expect(parseSettings({}).backend.type).toBe('memory');
  });

  it('Redis without a URL uses the reference default, a twemproxy unix socket', () => {
    expect(parseSettings({ BACKEND_TYPE: 'redis' }).backend.redis).toMatchObject({
      url: '/var/run/nutcracker/ratelimit.sock',
      socketType: 'unix',
    });
  });

  it.each([
    [
      { BACKEND_TYPE: 'memory', REDIS_URL: 'a:1' },
      'BACKEND_TYPE=memory but REDIS_URL (KVSTORE_URL) (a Redis setting) is set: remove it or choose that backend',
    ],
    [
      { BACKEND_TYPE: 'redis', REDIS_URL: 'a:1', MEMCACHE_HOST_PORT: 'm:1' },
      /^BACKEND_TYPE=redis but MEMCACHE_HOST_PORT \(MEMSTORE_HOST_PORT\) \(a memcached setting\) is set/,
    ],
    [
      { BACKEND_TYPE: 'memcache', MEMCACHE_HOST_PORT: 'm:1', REDIS_URL: 'a:1' },
      /^BACKEND_TYPE=memcache but REDIS_URL \(KVSTORE_URL\) \(a Redis setting\) is set/,
    ],
    [
      { REDIS_URL: 'a:1', MEMSTORE_HOST_PORT: 'm:1' },
      /^both Redis settings \(REDIS_URL \(KVSTORE_URL\)\) and memcached settings \(MEMSTORE_HOST_PORT\) are set/,
    ],
  ])('%o is refused', (env, message) => {
    expect(() => parseSettings(env)).toThrow(message);
  });
});

describe('settings the reference has and we lacked', () => {
  it('REDIS_TIMEOUT: default 10s, Go durations, 0 disables; BACKEND_TIMEOUT_MS alone still applies', () => {
    expect(parseSettings({ REDIS_URL: 'a:1' }).backend.redis!.timeoutMs).toBe(10_000);
    expect(parseSettings({ REDIS_URL: 'a:1', REDIS_TIMEOUT: '250ms' }).backend.redis!.timeoutMs).toBe(250);
    expect(parseSettings({ REDIS_URL: 'a:1', REDIS_TIMEOUT: '0' }).backend.redis!.timeoutMs).toBe(0);
    expect(parseSettings({ REDIS_URL: 'a:1', BACKEND_TIMEOUT_MS: '300' }).backend.redis!.timeoutMs).toBe(300);
    expect(() => parseSettings({ REDIS_URL: 'a:1', REDIS_TIMEOUT: 'soon' })).toThrow(
      /^REDIS_TIMEOUT \(KVSTORE_TIMEOUT\) must be a duration/,
    );
  });

  it('sentinel auth, password or user:password', () => {
    const s = parseSettings({
      REDIS_TYPE: 'sentinel',
      REDIS_URL: 'mymaster,s1:26379,s2:26379',
      REDIS_SENTINEL_AUTH: 'sentinel-pass',
      REDIS_PERSECOND: 'true',
      REDIS_PERSECOND_TYPE: 'sentinel',
      REDIS_PERSECOND_URL: 'm2,s3:26379',
      REDIS_PERSECOND_SENTINEL_AUTH: 'su:sp',
    });
    expect(s.backend.redis!.sentinelAuth).toEqual({ password: 'sentinel-pass' });
    expect(s.backend.redisPerSecond!.sentinelAuth).toEqual({ username: 'su', password: 'sp' });
  });

  it('pool-on-empty: WAIT (any case) is accepted, CREATE and ERROR refused as the reference does', () => {
    expect(() => parseSettings({ REDIS_URL: 'a:1', REDIS_POOL_ON_EMPTY_BEHAVIOR: 'wait' })).not.toThrow();
    expect(() => parseSettings({ REDIS_URL: 'a:1', REDIS_POOL_ON_EMPTY_BEHAVIOR: 'CREATE' })).toThrow(
      /^REDIS_POOL_ON_EMPTY_BEHAVIOR \(KVSTORE_POOL_ON_EMPTY_BEHAVIOR\)=CREATE is not supported/,
    );
    expect(() =>
      parseSettings({
        REDIS_URL: 'a:1',
        REDIS_PERSECOND: 'true',
        REDIS_PERSECOND_URL: 'b:1',
        REDIS_PERSECOND_POOL_ON_EMPTY_BEHAVIOR: 'error',
      }),
    ).toThrow(/KVSTORE_PERSECOND_POOL_ON_EMPTY_BEHAVIOR\)=ERROR is not supported/);
    expect(() => parseSettings({ REDIS_URL: 'a:1', REDIS_POOL_ON_EMPTY_BEHAVIOR: 'SOMETIMES' })).toThrow(
      /must be one of WAIT, CREATE, ERROR/,
    );
  });

  it('cluster pipeline parallelism: default 1 (serial), 0 is the pool size, bounded by it, never negative', () => {
    const s = parseSettings({
      REDIS_TYPE: 'cluster',
      REDIS_URL: 'a:1,b:1',
      REDIS_CLUSTER_PIPELINE_PARALLELISM: '8',
      REDIS_PERSECOND: 'true',
      REDIS_PERSECOND_URL: 'c:1',
      REDIS_PERSECOND_CLUSTER_PIPELINE_PARALLELISM: '4',
    });
    expect(s.backend.redis!.clusterPipelineParallelism).toBe(8);
    expect(s.backend.redisPerSecond!.clusterPipelineParallelism).toBe(4);
    expect(() => parseSettings({ REDIS_URL: 'a:1', REDIS_CLUSTER_PIPELINE_PARALLELISM: '-1' })).toThrow(
      /REDIS_CLUSTER_PIPELINE_PARALLELISM/,
    );
    // The reference's TestEffectiveClusterPipelineParallelism table.
    expect(effectiveClusterParallelism(1, 10)).toBe(1);
    expect(effectiveClusterParallelism(0, 10)).toBe(10);
    expect(effectiveClusterParallelism(4, 10)).toBe(4);
    expect(effectiveClusterParallelism(20, 10)).toBe(10);
    expect(effectiveClusterParallelism(0, 0)).toBe(1);
  });

  it('start-up retries: 1s initial, 30s max, retry forever by default', () => {
    const s = parseSettings({
      REDIS_URL: 'a:1',
      REDIS_STARTUP_INITIAL_INTERVAL: '100ms',
      REDIS_STARTUP_MAX_INTERVAL: '2s',
      REDIS_STARTUP_MAX_ELAPSED_TIME: '1m',
    });
    expect(s.backend.startup).toEqual({ initialIntervalMs: 100, maxIntervalMs: 2000, maxElapsedMs: 60_000 });
  });

  it('xDS node metadata: k=v pairs, entries without = skipped, as the reference', () => {
    expect(
      parseSettings({ CONFIG_GRPC_XDS_NODE_METADATA: 'region=eu,zone=a=b,broken' }).observability.xds
        .nodeMetadata,
    ).toEqual([
      ['region', 'eu'],
      ['zone', 'a=b'],
    ]);
  });

  it('QUOTA_MODE and RESPONSE_DYNAMIC_METADATA, default false', () => {
    expect(parseSettings({}).server).toMatchObject({
      globalQuotaMode: false,
      responseDynamicMetadata: false,
    });
    expect(parseSettings({ QUOTA_MODE: 'true', RESPONSE_DYNAMIC_METADATA: '1' }).server).toMatchObject({
      globalQuotaMode: true,
      responseDynamicMetadata: true,
    });
  });

  it('defaults of the reference where the spec is silent: log level warn, connection age 24h, grace 1h', () => {
    const s = parseSettings({});
    expect(s.observability.log.level).toBe('warn');
    expect(s.observability.grpcServer.maxConnectionAgeMs).toBe(24 * 3_600_000);
    expect(s.observability.grpcServer.maxConnectionAgeGraceMs).toBe(3_600_000);
  });
});
