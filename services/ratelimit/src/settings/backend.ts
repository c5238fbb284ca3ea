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
/** What a call does when the backend fails: the reference's error, or fail open/closed. */
export type FailureMode = 'error' | 'allow' | 'deny';

export interface BackendSettings {
  /** `BACKEND_TYPE`: `memory`, `redis`, `memcache`. @default redis when KVSTORE_URL is set, else memory */
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
  /** `STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT`. @default false */
  stopCacheKeyIncrementWhenOverlimit: boolean;
  /** `BACKEND_TIMEOUT_MS`: bound of one backend round trip and of the start-up connect wait. @default 1000 */
  timeoutMs: number;
  /** `BACKEND_FAILURE_MODE`: `error` (gRPC UNKNOWN, as the reference), `allow` (fail open), `deny` (fail closed). @default error */
  failureMode: FailureMode;
}

function parseAuth(value: string | undefined): RedisEndpointSettings['auth'] {
  if (value === undefined) return undefined;
  const colon = value.indexOf(':');
  if (colon < 0) return { password: value };
  return { username: value.slice(0, colon), password: value.slice(colon + 1) };
}

function parseEndpoint(env: Env, prefix: string, urlRequired: boolean): RedisEndpointSettings {
  const url = text(env, `${prefix}URL`, '');
  if (url === '' && urlRequired) throw new SettingError(`${prefix}URL must be set`);
  const type = oneOf(env, `${prefix}TYPE`, ['single', 'sentinel', 'cluster'] as const, 'single');
  if (type === 'sentinel' && url.split(',').length < 2) {
    throw new SettingError(
      `${prefix}URL for sentinel must be '<master name>,<host>:<port>[,...]', got '${url}'`,
    );
  }
  return {
    socketType: oneOf(env, `${prefix}SOCKET_TYPE`, ['tcp', 'unix'] as const, 'tcp'),
    url,
    poolSize: integer(env, `${prefix}POOL_SIZE`, 10, 1, 1000),
    type,
    auth: parseAuth(optionalText(env, `${prefix}AUTH`)),
    tls: bool(env, `${prefix}TLS`, false),
    pipelineWindowMs: duration(env, `${prefix}PIPELINE_WINDOW`, 0),
    pipelineLimit: integer(env, `${prefix}PIPELINE_LIMIT`, 0, 0),
  };
}

export function parseBackendSettings(env: Env): BackendSettings {
  const kvUrl = optionalText(env, 'KVSTORE_URL');
  const named = oneOf(
    env,
    'BACKEND_TYPE',
    ['memory', 'redis', 'memcache', 'memstore'] as const,
    kvUrl ? 'redis' : 'memory',
  );
  const type: BackendType = named === 'memstore' ? 'memcache' : named;
  let memcache: MemcacheSettings | undefined;
  if (type === 'memcache') {
    const hostPorts = optionalText(env, 'MEMSTORE_HOST_PORT') ?? optionalText(env, 'MEMCACHE_HOST_PORT');
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
  const redis = type === 'redis' ? parseEndpoint(env, 'KVSTORE_', true) : undefined;
  const perSecond = type === 'redis' && bool(env, 'KVSTORE_PERSECOND', false);
  return {
    type,
    redis,
    memcache,
    redisPerSecond: perSecond ? parseEndpoint(env, 'KVSTORE_PERSECOND_', true) : undefined,
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
    stopCacheKeyIncrementWhenOverlimit: bool(env, 'STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT', false),
    timeoutMs: integer(env, 'BACKEND_TIMEOUT_MS', 1000, 1, 60_000),
    failureMode: oneOf(env, 'BACKEND_FAILURE_MODE', ['error', 'allow', 'deny'] as const, 'error'),
  };
}
