import { Cluster, Redis, type RedisOptions } from 'ioredis';
import type { FleetSettings } from './settings.js';

/** One ioredis client: a single server, a sentinel-managed master, or a cluster. */
export type RedisClient = Redis | Cluster;

/**
 * Opening Redis from the fleet settings, as services/ratelimit does (backends/redis-connection.ts):
 * commands fail fast while the connection is down (no offline queue, no retries) and time out after
 * REDIS_TIMEOUT_MS, so an outage never makes a request wait; the client reconnects by itself.
 * Auto-pipelining batches the commands of one tick into one write (each still its own round trip's
 * worth of reply).
 */
function baseOptions(settings: FleetSettings): RedisOptions {
  return {
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: settings.redisTimeoutMs,
    connectTimeout: Math.max(settings.redisTimeoutMs, 1000),
    retryStrategy: (times) => Math.min(times * 100, 2000),
    enableReadyCheck: true,
    // Commands issued in the same tick (the cache lookups of concurrent requests) leave in one write
    // and Redis reads them in one go: measured at about half the Redis CPU per cache hit and ~15% less
    // of the proxy's, for the same one round trip each.
    enableAutoPipelining: true,
    ...(settings.redisPassword ? { password: settings.redisPassword } : {}),
  };
}

function hostPort(text: string): { host: string; port: number } {
  const match = /^\[?([^\]]*)\]?:(\d+)$/.exec(text.trim());
  if (!match) throw new Error(`'${text}' is not <host>:<port>`);
  return { host: match[1] as string, port: Number(match[2]) };
}

export function openRedis(settings: FleetSettings): RedisClient {
  const url = settings.redisUrl;
  if (url === undefined) throw new Error('REDIS_URL is not set');
  const options = baseOptions(settings);
  if (settings.redisType === 'cluster') {
    return new Cluster(url.split(',').map(hostPort), {
      lazyConnect: true,
      enableAutoPipelining: true,
      enableOfflineQueue: false,
      enableReadyCheck: true,
      redisOptions: options,
      clusterRetryStrategy: (times) => Math.min(times * 100, 2000),
      slotsRefreshTimeout: Math.max(settings.redisTimeoutMs, 1000),
    });
  }
  if (settings.redisType === 'sentinel') {
    const [name, ...nodes] = url.split(',').map((part) => part.trim());
    return new Redis({
      ...options,
      name: name as string,
      sentinels: nodes.map(hostPort),
      sentinelRetryStrategy: (times) => Math.min(times * 100, 2000),
    });
  }
  return new Redis(url, options);
}

/**
 * The key names of one fleet: `{<prefix>}:<name>`. The braces are a Redis Cluster hash tag, so every
 * key of the fleet lives in one slot and the Lua scripts may touch several of them atomically.
 */
export class FleetKeys {
  readonly base: string;
  constructor(prefix: string) {
    this.base = `{${prefix}}:`;
  }
  key(name: string): string {
    return `${this.base}${name}`;
  }
}

/** Connects (lazyConnect clients) without failing the start: the proxy serves without Redis meanwhile. */
export function connectInBackground(client: RedisClient, onError: (error: unknown) => void): void {
  client.on('error', onError);
  client.connect().catch(onError);
}

/** `ready` when commands can be sent now. */
export function redisReady(client: RedisClient): boolean {
  return client.status === 'ready';
}
