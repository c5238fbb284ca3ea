import { useRedis } from '@platform/testkit/fixtures';
import { Redis } from 'ioredis';
import pino from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { RedisResponseCache } from '../src/cache/redis-cache.js';
import { FleetEvents } from '../src/fleet/events.js';

const logger = pino({ level: 'silent' });
const redis = useRedis();
const clients: Redis[] = [];
afterAll(async () => {
  for (const client of clients) client.disconnect();
});

async function connect(): Promise<Redis> {
  // Auto-pipelined, as the proxy's own client (fleet/redis.ts) is.
  const client = new Redis(redis.url, { lazyConnect: true, enableAutoPipelining: true });
  await client.connect();
  clients.push(client);
  return client;
}

async function instance(prefix: string, name: string, events?: FleetEvents): Promise<RedisResponseCache> {
  return new RedisResponseCache({
    client: await connect(),
    events,
    prefix,
    instanceId: name,
    maxEntries: 100,
    defaultTtlMs: 60_000,
    staleMs: 60_000,
    clock: Date.now,
    logger,
  });
}

const key = 'a'.repeat(64);

describe('RedisResponseCache', () => {
  it('answers a hit with one Redis round trip (commands counted with MONITOR)', async () => {
    const cache = await instance('rt', 'a');
    await cache.put(key, '{"data":{"posts":[]}}', ['Post'], Date.now());
    // The first lookup on a server that does not know the script yet loads it (EVALSHA, then EVAL).
    await cache.get(key);
    const monitor = await (await connect()).monitor();
    const seen: string[][] = [];
    monitor.on('monitor', (_time: string, args: string[], source: string) => {
      // Commands a script runs inside Redis are reported with source "lua": not round trips.
      if (source !== 'lua' && args.some((arg) => arg.includes('{rt}'))) seen.push(args);
    });
    await new Promise((resolve) => setTimeout(resolve, 200));
    const hit = await cache.get(key);
    await new Promise((resolve) => setTimeout(resolve, 500));
    monitor.disconnect();
    expect(hit?.body?.toString()).toBe('{"data":{"posts":[]}}');
    expect(seen.map((args) => args[0]?.toLowerCase())).toEqual(['evalsha']);
  });

  it('stores an answer fetched across another instance invalidation as invalidated', async () => {
    const a = await instance('race', 'a');
    const b = await instance('race', 'b');
    expect(await a.get(key)).toBeUndefined(); // a's lookup, then a goes upstream...
    await b.invalidate(new Set(['Post'])); // ...meanwhile b's mutation invalidates Posts
    await a.put(key, '{"data":{"posts":[]}}', ['Post'], Date.now());
    expect((await b.get(key))?.invalidated).toBe(true);
    // Without an invalidation between its lookup and its store, the answer is stored fresh.
    await a.get(key);
    await a.put(key, '{"data":{"posts":[]}}', ['Post'], Date.now());
    expect((await b.get(key))?.invalidated).toBe(false);
  });

  it("moves every instance's epoch on a purge, through the fleet channel", async () => {
    const subscriber = await connect();
    await subscriber.subscribe('{ev}:events');
    const events = new FleetEvents(subscriber, undefined, '{ev}:events', logger);
    const a = await instance('ev', 'a', events);
    const b = await instance('ev', 'b');
    const before = a.epoch;
    await b.purgeBy({ kind: 'all' });
    await expect.poll(() => a.epoch, { timeout: 5000 }).toBeGreaterThan(before);
  });

  it('is a miss, not an error, while Redis cannot be reached, and owes the invalidation', async () => {
    const client = new Redis(redis.url, {
      lazyConnect: true,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
    });
    client.on('error', () => undefined); // never connected: every command fails at once
    const cache = new RedisResponseCache({
      client,
      events: undefined,
      prefix: 'down',
      instanceId: 'a',
      maxEntries: 10,
      defaultTtlMs: 60_000,
      staleMs: 0,
      clock: Date.now,
      logger,
    });
    expect(await cache.get(key)).toBeUndefined();
    expect(await cache.invalidate(new Set(['Post']))).toBe(0);
    expect(cache.invalidationOwed).toBe(true);
    await cache.put(key, '{"data":{}}', ['Post'], Date.now()); // logged, not thrown
  });
});
