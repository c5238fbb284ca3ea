import pino from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { etagOf, ResponseCache } from '../src/cache/response-cache.js';
import { FileCacheStore, MemoryCacheStore } from '../src/cache/store.js';
import { eventually } from './support/client.js';
import { tempDir } from './support/processes.js';

const logger = pino({ level: 'silent' });
const key = (n: number) => n.toString(16).padStart(64, '0');
const body = (n: number) => `{"data":{"n":${n},"pad":"${'x'.repeat(50)}"}}`;
const dirs: Array<{ remove(): Promise<void> }> = [];
afterAll(async () => {
  for (const dir of dirs) await dir.remove();
});

describe('ResponseCache', () => {
  it('gives a refreshed entry the ETag of its body: kept when the bytes are the same, new when not', async () => {
    const cache = await ResponseCache.open(
      new MemoryCacheStore(),
      { maxEntries: 10, maxBytes: 1e9, memoryBytes: 1e9 },
      logger,
    );
    await cache.put(key(1), body(1), [], 1);
    const first = cache.peek(key(1))?.etag;
    expect(first).toBe(etagOf(body(1)));
    await cache.put(key(1), body(1), [], 2);
    expect(cache.peek(key(1))?.etag).toBe(first);
    await cache.put(key(1), body(2), [], 3);
    expect(cache.peek(key(1))?.etag).toBe(etagOf(body(2)));
  });

  it('evicts the least recently used entries beyond the entry bound, from the store too', async () => {
    const store = new MemoryCacheStore();
    const cache = await ResponseCache.open(store, { maxEntries: 3, maxBytes: 1e9, memoryBytes: 1e9 }, logger);
    for (const n of [1, 2, 3]) await cache.put(key(n), body(n), [], n);
    cache.peek(key(1)); // 1 is now the most recently used
    await cache.put(key(4), body(4), [], 4);
    expect(cache.peek(key(2))).toBeUndefined();
    expect(await store.read(key(2))).toBeUndefined();
    expect(cache.peek(key(1))?.body?.toString()).toBe(body(1));
    expect(cache.stats.entries).toBe(3);
  });

  it('respects the byte bound and the memory budget, reading evicted-from-memory bodies from disk', async () => {
    const dir = await tempDir('response-cache');
    dirs.push(dir);
    const size = Buffer.byteLength(body(1));
    const store = await FileCacheStore.open(dir.path);
    const cache = await ResponseCache.open(
      store,
      { maxEntries: 100, maxBytes: size * 3, memoryBytes: size },
      logger,
    );
    for (const n of [1, 2, 3, 4]) await cache.put(key(n), body(n), [], n);
    expect(cache.stats).toMatchObject({ entries: 3, bytes: size * 3, memoryBytes: size });
    expect(cache.peek(key(2))?.body).toBeUndefined();
    expect((await cache.get(key(2)))?.body?.toString()).toBe(body(2));
    const reopened = await ResponseCache.open(
      store,
      { maxEntries: 2, maxBytes: 1e9, memoryBytes: 1e9 },
      logger,
    );
    expect(reopened.stats.entries).toBe(2);
    expect(reopened.peek(key(2))).toBeUndefined(); // the oldest stored entry went first
  });

  it('invalidates entries sharing a tag, and the invalidation survives a reopen', async () => {
    const store = new MemoryCacheStore();
    const cache = await ResponseCache.open(
      store,
      { maxEntries: 10, maxBytes: 1e9, memoryBytes: 1e9 },
      logger,
    );
    await cache.put(key(1), body(1), ['Post', 'id:a'], 1);
    await cache.put(key(2), body(2), ['Tag'], 2);
    await cache.put(key(3), body(3), ['Category', 'id:b'], 3);
    expect(cache.invalidate(new Set(['Post']))).toBe(1);
    expect(cache.invalidate(new Set(['id:b']))).toBe(1);
    expect(cache.peek(key(2))?.invalidated).toBe(false);
    // The invalidations are written in the background: wait until the store holds both.
    await eventually('the invalidations to be stored', async () =>
      (await store.read(key(1)))?.invalidated && (await store.read(key(3)))?.invalidated ? true : undefined,
    );
    const reopened = await ResponseCache.open(
      store,
      { maxEntries: 10, maxBytes: 1e9, memoryBytes: 1e9 },
      logger,
    );
    expect(reopened.peek(key(1))?.invalidated).toBe(true);
    expect(reopened.peek(key(3))?.invalidated).toBe(true);
    expect(cache.invalidate(new Set(['*']))).toBe(1);
  });
});
