import { openCluster, openSentinel, openSingle } from '../backends/redis-connection.js';
import type { BackendSettings } from '../settings/backend.js';
import { RedisQuotaStore } from './redis-store.js';
import { MemoryQuotaStore, type QuotaStore } from './store.js';

/**
 * The RLQS state in the configured backend: the in-process store, or Redis (the main KVSTORE_*
 * endpoint, on a connection of its own); undefined for memcached, which cannot hold it (a set of
 * participants with their report times, changed atomically with the usage).
 */
export function createQuotaStore(settings: BackendSettings, ttlMs: number): QuotaStore | undefined {
  switch (settings.type) {
    case 'memory':
      return new MemoryQuotaStore(ttlMs, Date.now, settings.memoryMaxKeys);
    case 'memcache':
      return undefined;
    case 'redis': {
      const endpoint = settings.redis!;
      const timeout = endpoint.timeoutMs;
      switch (endpoint.type) {
        case 'single':
          return new RedisQuotaStore(
            openSingle(endpoint, settings.tls, timeout, true),
            ttlMs,
            false,
            `redis single ${endpoint.url}`,
          );
        case 'sentinel':
          return new RedisQuotaStore(
            openSentinel(endpoint, settings.tls, timeout, true),
            ttlMs,
            false,
            `redis sentinel ${endpoint.url}`,
          );
        case 'cluster':
          return new RedisQuotaStore(
            openCluster(endpoint, settings.tls, timeout, true),
            ttlMs,
            true,
            `redis cluster ${endpoint.url}`,
          );
      }
    }
  }
}
