import type { BackendSettings, RedisEndpointSettings } from '../settings/backend.js';
import { MemcachedBackend } from './memcached.js';
import { MemoryBackend } from './memory.js';
import { RedisBackend } from './redis.js';
import { openCluster, openSentinel, openSingle } from './redis-connection.js';
import { SplitBackend } from './split.js';
import type { CounterBackend } from './types.js';

/** Builds the backend the settings ask for (the in-process store when none is configured). */
function redisBackend(endpoint: RedisEndpointSettings, settings: BackendSettings): RedisBackend {
  const common = {
    healthCheckActiveConnection: settings.healthCheckActiveConnection,
    connectTimeoutMs: settings.timeoutMs,
    pipelineWindowMs: endpoint.pipelineWindowMs,
    pipelineLimit: endpoint.pipelineLimit,
  };
  const pool = <T>(open: () => T): T[] => Array.from({ length: endpoint.poolSize }, open);
  switch (endpoint.type) {
    case 'single':
      return new RedisBackend({
        ...common,
        description: `redis single ${endpoint.socketType === 'unix' ? `unix:${endpoint.url}` : endpoint.url} (pool ${endpoint.poolSize})`,
        clients: pool(() => openSingle(endpoint, settings.tls, settings.timeoutMs)),
      });
    case 'sentinel':
      return new RedisBackend({
        ...common,
        description: `redis sentinel ${endpoint.url} (pool ${endpoint.poolSize})`,
        clients: pool(() => openSentinel(endpoint, settings.tls, settings.timeoutMs)),
      });
    case 'cluster':
      // One cluster client: it keeps a connection per node itself.
      return new RedisBackend({
        ...common,
        description: `redis cluster ${endpoint.url}`,
        clients: [openCluster(endpoint, settings.tls, settings.timeoutMs)],
        pipelinePerKey: true,
      });
  }
}

export function createBackend(settings: BackendSettings): CounterBackend {
  switch (settings.type) {
    case 'memory':
      return new MemoryBackend();
    case 'redis': {
      const main = redisBackend(settings.redis!, settings);
      if (!settings.redisPerSecond) return main;
      return new SplitBackend(main, redisBackend(settings.redisPerSecond, settings));
    }
    case 'memcache':
      return new MemcachedBackend({
        hostPorts: settings.memcache!.hostPorts,
        timeoutMs: settings.timeoutMs,
        healthCheckActiveConnection: settings.healthCheckActiveConnection,
      });
  }
}
