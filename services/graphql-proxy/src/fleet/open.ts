import type { Logger } from 'pino';
import { RedisResponseCache } from '../cache/redis-cache.js';
import type { ProxyConfig } from '../config.js';
import { FleetEvents } from './events.js';
import { connectInBackground, FleetKeys, openRedis, type RedisClient, redisReady } from './redis.js';
import { RedisScript } from './script.js';

/** The Redis side of a proxy in a fleet: connections, the fleet channel, and the stores on Redis. */
export interface Fleet {
  readonly client: RedisClient;
  readonly events: FleetEvents;
  readonly keys: FleetKeys;
  readonly instanceId: string;
  /** Set when CACHE_STORE=redis. */
  readonly cache: RedisResponseCache | undefined;
  /** True while commands can be sent. */
  ready(): boolean;
  close(): Promise<void>;
}

/** Opens the fleet when a store is `redis`; `undefined` otherwise (one instance on files). */
export function openFleet(config: ProxyConfig, logger: Logger, clock: () => number): Fleet | undefined {
  const settings = config.fleet;
  if (settings.cacheStore !== 'redis' && settings.queueStore !== 'redis') return undefined;
  const client = openRedis(settings);
  const subscriber = openRedis(settings);
  const keys = new FleetKeys(settings.redisKeyPrefix);
  // Logged once per outage, not at every reconnection attempt.
  let down = false;
  const onError = (error: unknown) => {
    if (down) return;
    down = true;
    logger.error(
      { err: error },
      'Redis unavailable; the proxy answers without the shared stores until it is back',
    );
  };
  client.on('ready', () => {
    if (down) logger.info('Redis available again');
    down = false;
    RedisScript.preload(client).catch((error: unknown) =>
      logger.debug({ err: error }, 'could not preload the Lua scripts; loaded on first use'),
    );
  });
  connectInBackground(client, onError);
  connectInBackground(subscriber, () => undefined);
  const events = new FleetEvents(subscriber, client, keys.key('events'), logger);
  const cache =
    settings.cacheStore === 'redis'
      ? new RedisResponseCache({
          client,
          events,
          prefix: settings.redisKeyPrefix,
          instanceId: settings.instanceId,
          maxEntries: config.cacheMaxEntries,
          defaultTtlMs: config.cacheTtlMs,
          staleMs: Math.max(config.staleIfErrorMs, config.staleWhileRevalidateMs),
          clock,
          logger,
          near: settings.near,
        })
      : undefined;
  return {
    client,
    events,
    keys,
    instanceId: settings.instanceId,
    cache,
    ready: () => redisReady(client),
    async close() {
      client.disconnect();
      subscriber.disconnect();
    },
  };
}
