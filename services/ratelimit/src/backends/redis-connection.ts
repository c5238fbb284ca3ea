import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Cluster, Redis, RedisOptions } from 'ioredis';
import type { RedisEndpointSettings, RedisTlsSettings } from '../settings/backend.js';

/**
 * Opening ioredis connections from the KVSTORE_* settings: `single` is `<host>:<port>` (or a unix
 * socket path with KVSTORE_SOCKET_TYPE=unix, or a `redis://` URL). Commands fail fast while the
 * connection is down (no offline queue) and time out after `timeoutMs`, so an outage never makes
 * requests wait for long.
 */
export function baseOptions(
  endpoint: RedisEndpointSettings,
  tls: RedisTlsSettings | undefined,
  timeoutMs: number,
): RedisOptions {
  const options: RedisOptions = {
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    // KVSTORE_TIMEOUT=0 means no timeout, as the reference's REDIS_TIMEOUT.
    ...(timeoutMs > 0 ? { commandTimeout: timeoutMs, connectTimeout: Math.max(timeoutMs, 1000) } : {}),
    retryStrategy: (times) => Math.min(times * 100, 2000),
    enableReadyCheck: true,
  };
  if (endpoint.auth) {
    options.password = endpoint.auth.password;
    if (endpoint.auth.username !== undefined) options.username = endpoint.auth.username;
  }
  if (endpoint.tls && tls) {
    options.tls = {
      rejectUnauthorized: !tls.skipHostnameVerification || tls.caCertFile !== undefined,
      ...(tls.skipHostnameVerification ? { checkServerIdentity: () => undefined } : {}),
      ...(tls.caCertFile ? { ca: readFileSync(tls.caCertFile) } : {}),
      ...(tls.clientCertFile ? { cert: readFileSync(tls.clientCertFile) } : {}),
      ...(tls.clientKeyFile ? { key: readFileSync(tls.clientKeyFile) } : {}),
    };
  }
  return options;
}

/**
 * ioredis (about 12 MB resident) is loaded on the first Redis connection only, so the in-process
 * and memcached backends never carry it; synchronously (it is CommonJS), as the backend is built.
 */
const load = createRequire(import.meta.url);
function ioredis(): typeof import('ioredis') {
  return load('ioredis') as typeof import('ioredis');
}

/** Splits `host:port` (IPv6 in brackets allowed). */
export function hostPort(text: string): { host: string; port: number } {
  const m = /^\[?([^\]]*)\]?:(\d+)$/.exec(text.trim());
  if (!m) throw new Error(`'${text}' is not <host>:<port>`);
  return { host: m[1]!, port: Number(m[2]) };
}

export function openSingle(
  endpoint: RedisEndpointSettings,
  tls: RedisTlsSettings | undefined,
  timeoutMs: number,
  /** Commands of one turn of the event loop written together (the RLQS store: one write for the reports read at once). */
  autoPipelining = false,
): Redis {
  const options = {
    ...baseOptions(endpoint, tls, timeoutMs),
    ...(autoPipelining ? { enableAutoPipelining: true } : {}),
  };
  const { Redis } = ioredis();
  if (endpoint.socketType === 'unix') return new Redis({ ...options, path: endpoint.url });
  if (/^rediss?:\/\//.test(endpoint.url)) return new Redis(endpoint.url, options);
  return new Redis({ ...options, ...hostPort(endpoint.url) });
}

/** `KVSTORE_TYPE=sentinel`: URL `<master name>,<host>:<port>[,<host>:<port>...]`. */
export function openSentinel(
  endpoint: RedisEndpointSettings,
  tls: RedisTlsSettings | undefined,
  timeoutMs: number,
  /** As openSingle's. */
  autoPipelining = false,
): Redis {
  const [name, ...nodes] = endpoint.url.split(',').map((p) => p.trim());
  const { Redis } = ioredis();
  return new Redis({
    ...baseOptions(endpoint, tls, timeoutMs),
    ...(autoPipelining ? { enableAutoPipelining: true } : {}),
    name: name!,
    sentinels: nodes.map(hostPort),
    // KVSTORE_SENTINEL_AUTH authenticates to the sentinels; KVSTORE_AUTH to the master.
    ...(endpoint.sentinelAuth
      ? {
          sentinelPassword: endpoint.sentinelAuth.password,
          ...(endpoint.sentinelAuth.username !== undefined
            ? { sentinelUsername: endpoint.sentinelAuth.username }
            : {}),
        }
      : {}),
    sentinelRetryStrategy: (times) => Math.min(times * 100, 2000),
  });
}

/** `KVSTORE_TYPE=cluster`: URL `<host>:<port>,<host>:<port>,...` of the cluster nodes. */
export function openCluster(
  endpoint: RedisEndpointSettings,
  tls: RedisTlsSettings | undefined,
  timeoutMs: number,
  /** Commands of one turn of the event loop written to each node together (the RLQS store's many per-counter calls). */
  autoPipelining = false,
): Cluster {
  const redisOptions = baseOptions(endpoint, tls, timeoutMs);
  const { Cluster } = ioredis();
  return new Cluster(
    endpoint.url.split(',').map((p) => hostPort(p)),
    {
      lazyConnect: true,
      enableOfflineQueue: false,
      enableReadyCheck: true,
      redisOptions,
      clusterRetryStrategy: (times) => Math.min(times * 100, 2000),
      ...(autoPipelining ? { enableAutoPipelining: true } : {}),
      ...(timeoutMs > 0 ? { slotsRefreshTimeout: Math.max(timeoutMs, 1000) } : {}),
    },
  );
}
