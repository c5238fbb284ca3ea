import { useRedis } from '@platform/testkit/fixtures';
import { Redis } from 'ioredis';
import pino from 'pino';
import { afterAll } from 'vitest';
import { RedisResponseCache } from '../src/cache/redis-cache.js';
import { ResponseCache } from '../src/cache/response-cache.js';
import { FileCacheStore } from '../src/cache/store.js';
import { answerCacheContract } from './support/answer-cache.contract.js';
import { tempDir } from './support/processes.js';

// The same contract for the one-instance file cache and the fleet's Redis cache.
const logger = pino({ level: 'silent' });
const cleanups: Array<() => Promise<unknown>> = [];
afterAll(async () => {
  for (const cleanup of cleanups) await cleanup();
});

answerCacheContract('file', async (maxEntries) => {
  const dir = await tempDir('answer-cache');
  cleanups.push(() => dir.remove());
  return ResponseCache.open(
    await FileCacheStore.open(dir.path),
    { maxEntries, maxBytes: 1 << 30, memoryBytes: 1 << 20 },
    logger,
  );
});

const redis = useRedis();
let prefixes = 0;
answerCacheContract('redis', async (maxEntries, clock) => {
  const client = new Redis(redis.url, { lazyConnect: true });
  await client.connect();
  cleanups.push(() => client.quit());
  prefixes += 1;
  return new RedisResponseCache({
    client,
    events: undefined,
    prefix: `contract-${process.pid}-${prefixes}`,
    instanceId: 'test',
    maxEntries,
    defaultTtlMs: 60_000,
    staleMs: 60_000,
    clock,
    logger,
  });
});
