import { readFileSync } from 'node:fs';
import type { ConnectionOptions } from 'node:tls';
import type { BackendSettings, RedisEndpointSettings, RedisTlsSettings } from '../settings/backend.js';
import type { StatsRegistry } from '../stats/registry.js';
import { MemcachedBackend, memcachedStats } from './memcached.js';
import { MemoryBackend } from './memory.js';
import { RedisBackend } from './redis.js';
import { openCluster, openSentinel, openSingle } from './redis-connection.js';
import { SplitBackend } from './split.js';
import type { CounterBackend } from './types.js';

/** As the reference: 1 stays serial; 0 or above the pool size means the pool size. */
export function effectiveClusterParallelism(configured: number, poolSize: number): number {
  if (configured === 1) return 1;
  const ceiling = Math.max(1, poolSize);
  return configured === 0 || configured > ceiling ? ceiling : configured;
}

/** Builds the backend the settings ask for (the in-process store when none is configured). */
function redisBackend(
  endpoint: RedisEndpointSettings,
  settings: BackendSettings,
  registry: StatsRegistry | undefined,
  scope: string,
): RedisBackend {
  const common = {
    ...(registry
      ? {
          poolStats: {
            active: registry.gauge(`ratelimit.${scope}.cx_active`),
            total: registry.counter(`ratelimit.${scope}.cx_total`),
            localClose: registry.counter(`ratelimit.${scope}.cx_local_close`),
          },
        }
      : {}),
    healthCheckActiveConnection: settings.healthCheckActiveConnection,
    connectTimeoutMs: endpoint.timeoutMs > 0 ? endpoint.timeoutMs : settings.timeoutMs,
    pipelineWindowMs: endpoint.pipelineWindowMs,
    pipelineLimit: endpoint.pipelineLimit,
  };
  const pool = <T>(open: () => T): T[] => Array.from({ length: endpoint.poolSize }, open);
  switch (endpoint.type) {
    case 'single':
      return new RedisBackend({
        ...common,
        description: `redis single ${endpoint.socketType === 'unix' ? `unix:${endpoint.url}` : endpoint.url} (pool ${endpoint.poolSize})`,
        clients: pool(() => openSingle(endpoint, settings.tls, endpoint.timeoutMs)),
      });
    case 'sentinel':
      return new RedisBackend({
        ...common,
        description: `redis sentinel ${endpoint.url} (pool ${endpoint.poolSize})`,
        clients: pool(() => openSentinel(endpoint, settings.tls, endpoint.timeoutMs)),
      });
    case 'cluster':
      // One cluster client: it keeps a connection per node itself.
      return new RedisBackend({
        ...common,
        description: `redis cluster ${endpoint.url}`,
        clients: [openCluster(endpoint, settings.tls, endpoint.timeoutMs)],
        pipelinePerKey: true,
        clusterPipelineParallelism: effectiveClusterParallelism(
          endpoint.clusterPipelineParallelism,
          endpoint.poolSize,
        ),
      });
  }
}

/** TLS options for memcached from the MEMSTORE_TLS_* files. */
function memcachedTls(files: RedisTlsSettings): ConnectionOptions {
  return {
    ...(files.skipHostnameVerification ? { checkServerIdentity: () => undefined } : {}),
    ...(files.caCertFile ? { ca: readFileSync(files.caCertFile) } : {}),
    ...(files.clientCertFile ? { cert: readFileSync(files.clientCertFile) } : {}),
    ...(files.clientKeyFile ? { key: readFileSync(files.clientKeyFile) } : {}),
  };
}

/** Where a backend reports what it answers through rather than fails on (pino's shape). */
export interface BackendLog {
  error(fields: object, message: string): void;
}

/**
 * `onLookupError` hears about failed MEMSTORE_SRV refreshes (the old node list is kept); `log` gets
 * memcached multi-get failures, which the call answers through (counting from 0), as the reference.
 */
export function createBackend(
  settings: BackendSettings,
  onLookupError?: (error: Error) => void,
  registry?: StatsRegistry,
  log?: BackendLog,
): CounterBackend {
  switch (settings.type) {
    case 'memory':
      return new MemoryBackend({ maxKeys: settings.memoryMaxKeys });
    case 'redis': {
      const main = redisBackend(settings.redis!, settings, registry, 'redis_pool');
      if (!settings.redisPerSecond) return main;
      return new SplitBackend(
        main,
        redisBackend(settings.redisPerSecond, settings, registry, 'redis_per_second_pool'),
      );
    }
    case 'memcache': {
      const m = settings.memcache!;
      return new MemcachedBackend({
        nodes: m.srv
          ? { kind: 'srv', srv: m.srv, refreshMs: m.srvRefreshMs, dnsServers: m.srvDnsServers }
          : { kind: 'list', hostPorts: m.hostPorts ?? '' },
        maxIdleConns: m.maxIdleConns,
        tls: m.tls ? memcachedTls(m.tlsFiles) : undefined,
        timeoutMs: settings.timeoutMs,
        healthCheckActiveConnection: settings.healthCheckActiveConnection,
        ...(onLookupError ? { onLookupError } : {}),
        ...(registry ? { stats: memcachedStats(registry) } : {}),
        ...(log
          ? {
              onReadError: (error: Error, keys: readonly string[]) =>
                log.error({ err: error, keys }, 'error multi-getting memcache keys'),
            }
          : {}),
      });
    }
  }
}
