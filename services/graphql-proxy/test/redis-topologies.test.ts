import {
  type RedisCluster,
  type RedisSentinelSetup,
  startRedisCluster,
  startRedisSentinel,
} from '@platform/testkit/redis';
import pino from 'pino';
import { afterAll, beforeAll } from 'vitest';
import { RedisResponseCache } from '../src/cache/redis-cache.js';
import { openRedis, type RedisClient } from '../src/fleet/redis.js';
import { type FleetSettings, parseFleetSettings } from '../src/fleet/settings.js';
import { answerCacheContract } from './support/answer-cache.contract.js';

// The fleet cache's contract on a Redis Cluster (every key of a fleet in one slot: the `{prefix}`
// hash tag) and on a sentinel-managed master, opened from the settings as the proxy opens them.
const logger = pino({ level: 'silent' });
let cluster: RedisCluster | undefined;
let sentinel: RedisSentinelSetup | undefined;
const clients: RedisClient[] = [];

beforeAll(async () => {
  [cluster, sentinel] = await Promise.all([startRedisCluster(3), startRedisSentinel(1)]);
}, 120_000);

afterAll(async () => {
  for (const client of clients) client.disconnect();
  await cluster?.stop();
  await sentinel?.stop();
}, 60_000);

let prefixes = 0;
function topology(name: string, settings: () => FleetSettings): void {
  answerCacheContract(`redis ${name}`, async (maxEntries, clock) => {
    const client = openRedis(settings());
    clients.push(client);
    await client.connect();
    prefixes += 1;
    return new RedisResponseCache({
      client,
      events: undefined,
      prefix: `${name}-${process.pid}-${prefixes}`,
      instanceId: 'test',
      maxEntries,
      defaultTtlMs: 60_000,
      staleMs: 60_000,
      clock,
      logger,
    });
  });
}

topology('cluster', () =>
  parseFleetSettings({ CACHE_STORE: 'redis', REDIS_TYPE: 'cluster', REDIS_URL: cluster?.hostPorts }),
);
topology('sentinel', () =>
  parseFleetSettings({ CACHE_STORE: 'redis', REDIS_TYPE: 'sentinel', REDIS_URL: sentinel?.sentinelUrl }),
);
