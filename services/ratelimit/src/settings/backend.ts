import { bool, duration, type Env, integer, oneOf, optionalText, SettingError, text } from './env.js';

/** Cache backend settings (spec "Cache backend settings"; reference "Limits, keys and counting"). */
export type RedisTopology = 'single' | 'sentinel' | 'cluster';

export interface RedisEndpointSettings {
  /** `KVSTORE_SOCKET_TYPE`: `tcp` or `unix`. @default tcp */
  socketType: 'tcp' | 'unix';
  /** `KVSTORE_URL`: `<host>:<port>`, a unix socket path, or a sentinel/cluster list. */
  url: string;
  /** `KVSTORE_POOL_SIZE`. @default 10 */
  poolSize: number;
  /** `KVSTORE_TYPE`. @default single */
  type: RedisTopology;
  /** `KVSTORE_AUTH`: `<password>` or `<username>:<password>`. */
  auth: { username?: string; password: string } | undefined;
  /** `KVSTORE_TLS`. @default false */
  tls: boolean;
  /** `KVSTORE_PIPELINE_WINDOW` in ms: implicit pipelining across requests; 0 disables it. @default 0 */
  pipelineWindowMs: number;
  /** `KVSTORE_PIPELINE_LIMIT`: commands held before an early flush; 0 is no limit. @default 0 */
  pipelineLimit: number;
  /** `KVSTORE_SENTINEL_AUTH`: `<password>` or `<username>:<password>` for the sentinels themselves. */
  sentinelAuth: { username?: string; password: string } | undefined;
  /**
   * `KVSTORE_TIMEOUT` in ms: connect and command timeout; 0 disables it. @default 10s (the
   * reference's REDIS_TIMEOUT); `BACKEND_TIMEOUT_MS` when only that is set.
   */
  timeoutMs: number;
  /**
   * `KVSTORE_CLUSTER_PIPELINE_PARALLELISM`, cluster only: per-key pipelines in flight at once for
   * one call; 1 sends them one after another (the reference's default), 0 means KVSTORE_POOL_SIZE,
   * above the pool size it is bounded to it. @default 1
   */
  clusterPipelineParallelism: number;
}

export interface RedisTlsSettings {
  clientCertFile: string | undefined;
  clientKeyFile: string | undefined;
  caCertFile: string | undefined;
  skipHostnameVerification: boolean;
}

export type BackendType = 'memory' | 'redis' | 'memcache';

/** `BACKEND_TYPE=memcache` (or `memstore`, the spec's name). */
export interface MemcacheSettings {
  /** `MEMSTORE_HOST_PORT` (or the reference's `MEMCACHE_HOST_PORT`): `host:port[,host:port...]`; exclusive with `srv`. */
  hostPorts: string | undefined;
  /** `MEMSTORE_SRV`: SRV record naming the nodes. */
  srv: string | undefined;
  /** `MEMSTORE_SRV_REFRESH` in ms; 0 looks up once. @default 0 */
  srvRefreshMs: number;
  /** `MEMSTORE_SRV_DNS_SERVERS`: DNS servers (`ip:port`, comma-separated) for the SRV lookup. @default the system's */
  srvDnsServers: string[];
  /** `MEMSTORE_MAX_IDLE_CONNS`: idle connections kept per node. @default 2 */
  maxIdleConns: number;
  /** `MEMSTORE_TLS`. @default false */
  tls: boolean;
  /** `MEMSTORE_TLS_CLIENT_CERT`, `_CLIENT_KEY`, `_CACERT`, `_SKIP_HOSTNAME_VERIFICATION`. */
  tlsFiles: RedisTlsSettings;
}
/** Start-up connection retries to Redis, as the reference's REDIS_STARTUP_* settings. */
export interface StartupRetrySettings {
  /** `KVSTORE_STARTUP_INITIAL_INTERVAL` in ms. @default 1s */
  initialIntervalMs: number;
  /** `KVSTORE_STARTUP_MAX_INTERVAL` in ms. @default 30s */
  maxIntervalMs: number;
  /** `KVSTORE_STARTUP_MAX_ELAPSED_TIME` in ms; 0 retries until Redis answers. @default 0 */
  maxElapsedMs: number;
}

/** What a call does when the backend fails: the reference's error, or fail open/closed. */
export type FailureMode = 'error' | 'allow' | 'deny';

export interface BackendSettings {
  /**
   * `BACKEND_TYPE`: `memory`, `redis`, `memcache` (`memstore`). @default the backend whose settings
   * are present (KVSTORE_ or REDIS_, MEMSTORE_ or MEMCACHE_), else memory
   */
  type: BackendType;
  redis: RedisEndpointSettings | undefined;
  memcache: MemcacheSettings | undefined;
  /** Present when `KVSTORE_PERSECOND` is true. */
  redisPerSecond: RedisEndpointSettings | undefined;
  tls: RedisTlsSettings;
  /** `KVSTORE_HEALTH_CHECK_ACTIVE_CONNECTION`. @default false */
  healthCheckActiveConnection: boolean;
  /** `CACHE_KEY_PREFIX`. @default '' */
  cacheKeyPrefix: string;
  /** `EXPIRATION_JITTER_MAX_SECONDS`. @default 300 */
  expirationJitterMaxSeconds: number;
  /** `LOCAL_CACHE_SIZE_IN_BYTES`; 0 disables the local over-limit cache. @default 0 */
  localCacheSizeInBytes: number;
  /**
   * `MEMORY_MAX_KEYS` (BACKEND_TYPE=memory only): live keys the in-process store holds at most; a
   * call needing one more fails as a backend failure (BACKEND_FAILURE_MODE). @default 2000000
   */
  memoryMaxKeys: number;
  /** `STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT`. @default false */
  stopCacheKeyIncrementWhenOverlimit: boolean;
  /** `BACKEND_TIMEOUT_MS`: bound of one memcached round trip and of its start-up connect wait. @default 1000 */
  timeoutMs: number;
  /** `KVSTORE_STARTUP_*`: how the start waits for Redis (retries with backoff). */
  startup: StartupRetrySettings;
  /** `BACKEND_FAILURE_MODE`: `error` (gRPC UNKNOWN, as the reference), `allow` (fail open), `deny` (fail closed). @default error */
  failureMode: FailureMode;
}

function parseAuth(value: string | undefined): RedisEndpointSettings['auth'] {
  if (value === undefined) return undefined;
  const colon = value.indexOf(':');
  if (colon < 0) return { password: value };
  return { username: value.slice(0, colon), password: value.slice(colon + 1) };
}

/** The reference's default URLs (a local twemproxy socket), used when only other settings are given. */
const DEFAULT_URL: Record<string, string> = {
  KVSTORE_: '/var/run/nutcracker/ratelimit.sock',
  KVSTORE_PERSECOND_: '/var/run/nutcracker/ratelimitpersecond.sock',
};

function poolOnEmpty(env: Env, name: string): void {
  const v = oneOf(env, name, ['WAIT', 'CREATE', 'ERROR'] as const, 'WAIT');
  // The reference (radix v4) refuses these at start-up; our pool of multiplexed connections never
  // runs empty, so WAIT is the only behaviour there is.
  if (v === 'CREATE') {
    throw new SettingError(
      `${name}=CREATE is not supported: the pool never creates overflow connections. Remove this setting or set it to WAIT, and consider increasing the pool size.`,
    );
  }
  if (v === 'ERROR') {
    throw new SettingError(
      `${name}=ERROR is not supported: the pool never fails fast when empty. Remove this setting or set it to WAIT; KVSTORE_TIMEOUT bounds every call.`,
    );
  }
}

function parseEndpoint(env: Env, prefix: string): RedisEndpointSettings {
  const url = text(env, `${prefix}URL`, DEFAULT_URL[prefix] ?? '');
  const type = oneOf(env, `${prefix}TYPE`, ['single', 'sentinel', 'cluster'] as const, 'single');
  if (type === 'sentinel' && url.split(',').length < 2) {
    throw new SettingError(
      `${prefix}URL: Expected master name and a list of urls for the sentinels, in the format: <redis master name>,<sentinel1>,...,<sentineln>; got '${url}'`,
    );
  }
  poolOnEmpty(env, `${prefix}POOL_ON_EMPTY_BEHAVIOR`);
  // The reference defaults to a unix socket whatever the URL; a host:port URL would then fail, so
  // the default follows the URL's shape (a path means a unix socket).
  const socketDefault = url.startsWith('/') || url.startsWith('.') ? 'unix' : 'tcp';
  const explicitTimeout = optionalText(env, `${prefix}TIMEOUT`);
  const legacyTimeout = optionalText(env, 'BACKEND_TIMEOUT_MS');
  return {
    socketType: oneOf(env, `${prefix}SOCKET_TYPE`, ['tcp', 'unix'] as const, socketDefault),
    url,
    poolSize: integer(env, `${prefix}POOL_SIZE`, 10, 1, 1000),
    type,
    auth: parseAuth(optionalText(env, `${prefix}AUTH`)),
    sentinelAuth: parseAuth(optionalText(env, `${prefix}SENTINEL_AUTH`)),
    tls: bool(env, `${prefix}TLS`, false),
    pipelineWindowMs: duration(env, `${prefix}PIPELINE_WINDOW`, 0),
    pipelineLimit: integer(env, `${prefix}PIPELINE_LIMIT`, 0, 0),
    timeoutMs:
      explicitTimeout === undefined && legacyTimeout !== undefined
        ? integer(env, 'BACKEND_TIMEOUT_MS', 1000, 1, 60_000)
        : duration(env, `${prefix}TIMEOUT`, 10_000),
    clusterPipelineParallelism: integer(env, `${prefix}CLUSTER_PIPELINE_PARALLELISM`, 1, 0, 10_000),
  };
}

/** Settings that describe one backend: their presence selects it, or fails the start if another is chosen. */
const SHARED_BACKEND_SETTINGS = new Set(['KVSTORE_HEALTH_CHECK_ACTIVE_CONNECTION']);

function backendSettingsSet(env: Env, prefix: string): string[] {
  return Object.keys(env)
    .filter((k) => k.startsWith(prefix) && !SHARED_BACKEND_SETTINGS.has(k))
    .filter((k) => env[k] !== undefined && env[k] !== '')
    .sort();
}

/**
 * The backend: BACKEND_TYPE when given, else the one the present settings describe, else the
 * in-process store. Never a silent fallback: a setting of a backend that is not used fails the start.
 */
function chooseBackend(env: Env): BackendType {
  const redisSet = backendSettingsSet(env, 'KVSTORE_');
  const memSet = backendSettingsSet(env, 'MEMSTORE_');
  const named = optionalText(env, 'BACKEND_TYPE');
  if (named === undefined) {
    if (redisSet.length > 0 && memSet.length > 0) {
      throw new SettingError(
        `both Redis settings (${redisSet.join(', ')}) and memcached settings (${memSet.join(', ')}) are set: set BACKEND_TYPE=redis or BACKEND_TYPE=memcache and remove the other's`,
      );
    }
    if (redisSet.length > 0) return 'redis';
    if (memSet.length > 0) return 'memcache';
    return 'memory';
  }
  const picked = oneOf(env, 'BACKEND_TYPE', ['memory', 'redis', 'memcache', 'memstore'] as const, 'memory');
  const type: BackendType = picked === 'memstore' ? 'memcache' : picked;
  const unused = [
    ...(type === 'redis' ? [] : redisSet.map((n) => `${n} (a Redis setting)`)),
    ...(type === 'memcache' ? [] : memSet.map((n) => `${n} (a memcached setting)`)),
  ];
  if (unused.length > 0) {
    throw new SettingError(
      `BACKEND_TYPE=${named} but ${unused.join(', ')} ${unused.length > 1 ? 'are' : 'is'} set: remove ${unused.length > 1 ? 'them' : 'it'} or choose that backend`,
    );
  }
  return type;
}

export function parseBackendSettings(env: Env): BackendSettings {
  const type = chooseBackend(env);
  if (type !== 'memory' && optionalText(env, 'MEMORY_MAX_KEYS') !== undefined)
    throw new SettingError(`MEMORY_MAX_KEYS is a setting of BACKEND_TYPE=memory, not ${type}: remove it`);
  let memcache: MemcacheSettings | undefined;
  if (type === 'memcache') {
    const hostPorts = optionalText(env, 'MEMSTORE_HOST_PORT');
    const srv = optionalText(env, 'MEMSTORE_SRV');
    if (hostPorts === undefined && srv === undefined)
      throw new SettingError('MEMSTORE_HOST_PORT or MEMSTORE_SRV must be set for BACKEND_TYPE=memstore');
    if (hostPorts !== undefined && srv !== undefined)
      throw new SettingError('MEMSTORE_HOST_PORT and MEMSTORE_SRV are exclusive: set only one');
    memcache = {
      hostPorts,
      srv,
      srvRefreshMs: duration(env, 'MEMSTORE_SRV_REFRESH', 0),
      srvDnsServers: text(env, 'MEMSTORE_SRV_DNS_SERVERS', '')
        .split(',')
        .map((s) => s.trim())
        .filter((s) => s !== ''),
      maxIdleConns: integer(env, 'MEMSTORE_MAX_IDLE_CONNS', 2, 0, 10_000),
      tls: bool(env, 'MEMSTORE_TLS', false),
      tlsFiles: {
        clientCertFile: optionalText(env, 'MEMSTORE_TLS_CLIENT_CERT'),
        clientKeyFile: optionalText(env, 'MEMSTORE_TLS_CLIENT_KEY'),
        caCertFile: optionalText(env, 'MEMSTORE_TLS_CACERT'),
        skipHostnameVerification: bool(env, 'MEMSTORE_TLS_SKIP_HOSTNAME_VERIFICATION', false),
      },
    };
  }
  const redis = type === 'redis' ? parseEndpoint(env, 'KVSTORE_') : undefined;
  const perSecond = type === 'redis' && bool(env, 'KVSTORE_PERSECOND', false);
  return {
    type,
    redis,
    memcache,
    redisPerSecond: perSecond ? parseEndpoint(env, 'KVSTORE_PERSECOND_') : undefined,
    tls: {
      clientCertFile: optionalText(env, 'KVSTORE_TLS_CLIENT_CERT'),
      clientKeyFile: optionalText(env, 'KVSTORE_TLS_CLIENT_KEY'),
      caCertFile: optionalText(env, 'KVSTORE_TLS_CACERT'),
      skipHostnameVerification: bool(env, 'KVSTORE_TLS_SKIP_HOSTNAME_VERIFICATION', false),
    },
    healthCheckActiveConnection: bool(env, 'KVSTORE_HEALTH_CHECK_ACTIVE_CONNECTION', false),
    cacheKeyPrefix: text(env, 'CACHE_KEY_PREFIX', ''),
    expirationJitterMaxSeconds: integer(env, 'EXPIRATION_JITTER_MAX_SECONDS', 300, 0),
    localCacheSizeInBytes: integer(env, 'LOCAL_CACHE_SIZE_IN_BYTES', 0, 0),
    memoryMaxKeys: integer(env, 'MEMORY_MAX_KEYS', 2_000_000, 1, 100_000_000),
    stopCacheKeyIncrementWhenOverlimit: bool(env, 'STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT', false),
    timeoutMs: integer(env, 'BACKEND_TIMEOUT_MS', 1000, 1, 60_000),
    startup: {
      initialIntervalMs: duration(env, 'KVSTORE_STARTUP_INITIAL_INTERVAL', 1000),
      maxIntervalMs: duration(env, 'KVSTORE_STARTUP_MAX_INTERVAL', 30_000),
      maxElapsedMs: duration(env, 'KVSTORE_STARTUP_MAX_ELAPSED_TIME', 0),
    },
    failureMode: oneOf(env, 'BACKEND_FAILURE_MODE', ['error', 'allow', 'deny'] as const, 'error'),
  };
}
