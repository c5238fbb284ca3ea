import { useRedis } from '@platform/testkit/fixtures';
import { Redis } from 'ioredis';
import pino from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { NearCache } from '../src/cache/near-cache.js';
import { RedisResponseCache } from '../src/cache/redis-cache.js';
import { FleetEvents } from '../src/fleet/events.js';

const logger = pino({ level: 'silent' });
const redis = useRedis();
const clients: Redis[] = [];
afterAll(async () => {
  for (const client of clients) client.disconnect();
});

async function connect(connectionName?: string): Promise<Redis> {
  // Auto-pipelined, as the proxy's own client (fleet/redis.ts) is.
  const client = new Redis(redis.url, {
    lazyConnect: true,
    enableAutoPipelining: true,
    ...(connectionName ? { connectionName } : {}),
  });
  await client.connect();
  clients.push(client);
  return client;
}

const NEAR = { maxEntries: 100, maxBytes: 1_000_000, maxAgeMs: 60_000 };

async function instance(
  prefix: string,
  name: string,
  events?: FleetEvents,
  near?: typeof NEAR,
): Promise<RedisResponseCache> {
  return new RedisResponseCache({
    ...(near ? { near } : {}),
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

describe('the near copy of a Redis cache (issue 46)', () => {
  /** An instance with its own subscribed fleet channel, as openFleet wires it. */
  async function nearInstance(prefix: string, name: string) {
    const subscriber = await connect(`${prefix}-${name}-subscriber`);
    const events = new FleetEvents(subscriber, undefined, `{${prefix}}:events`, logger);
    const cache = await instance(prefix, name, events, NEAR);
    await expect.poll(() => events.subscribed, { timeout: 5000 }).toBe(true);
    return { cache, events, subscriber };
  }
  const body = '{"data":{"posts":[{"id":"cG9zdDox"}]}}';

  it("answers a repeated lookup without Redis, and drops it on another instance's invalidation", async () => {
    const a = await instance('near', 'a');
    const { cache: b } = await nearInstance('near', 'b');
    await a.put(key, body, ['Post', 'id:cG9zdDox'], Date.now());
    // The first lookup after the subscription was confirmed may come before the epoch was read.
    await expect
      .poll(
        async () => {
          await b.get(key);
          return b.peek(key)?.body?.toString();
        },
        { timeout: 5000 },
      )
      .toBe(body);
    // a's mutation invalidates the entry in Redis; the announcement reaches b's channel.
    await a.invalidate(new Set(['id:cG9zdDox']));
    await expect.poll(() => b.peek(key), { timeout: 2000 }).toBeUndefined();
    const read = await b.get(key);
    expect(read?.invalidated).toBe(true);
    expect(b.peek(key)).toBeUndefined(); // an invalidated entry is not copied
    // A purge elsewhere empties it too.
    await a.put(key, body, ['Post'], Date.now());
    await b.get(key);
    expect(b.peek(key)).toBeDefined();
    await a.purgeBy({ kind: 'all' });
    await expect.poll(() => b.peek(key), { timeout: 2000 }).toBeUndefined();
  });

  it('is unused while its channel is not subscribed, and misses no invalidation made meanwhile', async () => {
    const a = await instance('near-cut', 'a');
    const { cache: b, events } = await nearInstance('near-cut', 'b');
    await a.put(key, body, ['Post'], Date.now());
    await expect
      .poll(
        async () => {
          await b.get(key);
          return b.peek(key);
        },
        { timeout: 5000 },
      )
      .toBeDefined();
    // Redis closes b's subscription (the connection drops; the client reconnects by itself).
    const admin = await connect();
    const list = String(await admin.client('LIST'));
    const id = /id=(\d+) .*name=near-cut-b-subscriber/.exec(list)?.[1];
    expect(id).toBeDefined();
    await admin.client('KILL', 'ID', id as string);
    await expect.poll(() => events.subscribed, { timeout: 2000 }).toBe(false);
    expect(b.peek(key)).toBeUndefined();
    // An invalidation whose announcement b cannot receive now...
    await a.invalidate(new Set(['Post']));
    await expect.poll(() => events.subscribed, { timeout: 5000 }).toBe(true);
    // ...is seen once subscribed again: the entry reads as invalidated and is not copied.
    expect((await b.get(key))?.invalidated).toBe(true);
    expect(b.peek(key)).toBeUndefined();
  });
});

describe('NearCache', () => {
  const answer = (name: string) => ({
    key: name,
    storedAt: 0,
    tags: [],
    invalidated: false,
    ttlMs: undefined,
    etag: '"e"',
    size: 10,
    body: Buffer.alloc(10),
  });

  it('refuses an entry read with an epoch older than one announced, and everything while suspended', () => {
    const near = new NearCache({ maxEntries: 10, maxBytes: 1000, maxAgeMs: 100 });
    expect(near.offer(answer('a'), 0, 0)).toBe(false); // not resumed yet
    near.resume(3);
    expect(near.offer(answer('a'), 2, 0)).toBe(false); // read before epoch 3
    expect(near.offer(answer('a'), 3, 0)).toBe(true);
    expect(near.get('a', 50)).toBeDefined();
    expect(near.get('a', 100)).toBeUndefined(); // maxAgeMs after it was read
    near.offer(answer('b'), 4, 100);
    near.invalidated(5); // an announcement: all goes, and reads of epoch 4 are refused from now on
    expect(near.get('b', 100)).toBeUndefined();
    expect(near.offer(answer('b'), 4, 100)).toBe(false);
    expect(near.offer(answer('b'), 5, 100)).toBe(true);
    near.suspend();
    expect(near.get('b', 100)).toBeUndefined();
    expect(near.offer(answer('b'), 5, 100)).toBe(false);
  });

  it('is bounded in entries, least recently used first', () => {
    const near = new NearCache({ maxEntries: 2, maxBytes: 1000, maxAgeMs: 1000 });
    near.resume(0);
    for (const name of ['a', 'b']) near.offer(answer(name), 0, 0);
    near.get('a', 1);
    near.offer(answer('c'), 0, 1);
    expect(
      [near.get('a', 2), near.get('b', 2), near.get('c', 2)].map((entry) => entry !== undefined),
    ).toEqual([true, false, true]);
  });
});
