import type { BackendSettings, RedisEndpointSettings } from '../settings/backend.js';
import { SettingError } from '../settings/env.js';
import { MemoryBackend } from './memory.js';
import { RedisBackend } from './redis.js';
import { openSingle } from './redis-connection.js';
import type { CounterBackend } from './types.js';

/** Builds the backend the settings ask for (the in-process store when none is configured). */
function redisBackend(endpoint: RedisEndpointSettings, settings: BackendSettings): RedisBackend {
  switch (endpoint.type) {
    case 'single': {
      const clients = Array.from({ length: endpoint.poolSize }, () =>
        openSingle(endpoint, settings.tls, settings.timeoutMs),
      );
      return new RedisBackend({
        description: `redis single ${endpoint.socketType === 'unix' ? `unix:${endpoint.url}` : endpoint.url} (pool ${endpoint.poolSize})`,
        clients,
        healthCheckActiveConnection: settings.healthCheckActiveConnection,
        connectTimeoutMs: settings.timeoutMs,
      });
    }
    case 'sentinel':
    case 'cluster':
      throw new SettingError(`KVSTORE_TYPE=${endpoint.type} is not supported yet (only single)`);
  }
}

export function createBackend(settings: BackendSettings): CounterBackend {
  switch (settings.type) {
    case 'memory':
      return new MemoryBackend();
    case 'redis': {
      if (settings.redisPerSecond) throw new SettingError('KVSTORE_PERSECOND is not supported yet');
      return redisBackend(settings.redis!, settings);
    }
    case 'memcache':
      throw new SettingError('BACKEND_TYPE=memcache is not supported yet');
  }
}
