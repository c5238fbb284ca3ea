import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { ResponseCache } from '../src/cache/response-cache.js';
import { ScopeResolver } from '../src/cache/scope.js';
import { MemoryCacheStore } from '../src/cache/store.js';
import { DocumentAnalyser } from '../src/graphql/document.js';
import { PersistedQueries } from '../src/graphql/persisted.js';
import { ProxyMetrics } from '../src/metrics.js';
import { GraphQLHandler } from '../src/proxy/graphql-handler.js';
import { LocalQueueAccess } from '../src/queue/access.js';
import { MutationQueue } from '../src/queue/mutation-queue.js';
import { MemoryOutcomeLog } from '../src/queue/outcomes.js';
import { MemoryQueueStore } from '../src/queue/store.js';
import { type UpstreamClient, UpstreamMonitor } from '../src/upstream/client.js';

/** A handler over an in-memory cache, an upstream answering `titles` at once, and a clock the test moves. */
async function handlerAt(clock: { now: number }) {
  const logger = pino({ level: 'silent' });
  const titles = { value: 'first' };
  const upstream: UpstreamClient = {
    post: async () => {
      const body = { data: { posts: { nodes: [{ title: titles.value }] } } };
      return { kind: 'answered', status: 200, text: JSON.stringify(body), body };
    },
    close: () => undefined,
  };
  const cache = await ResponseCache.open(
    new MemoryCacheStore(),
    { maxEntries: 10, maxBytes: 1e6, memoryBytes: 1e6 },
    logger,
  );
  const handler = new GraphQLHandler({
    mode: 'CRUDMODE',
    authToken: undefined,
    authTokenForQueries: false,
    cache,
    analyser: new DocumentAnalyser(),
    upstream,
    monitor: new UpstreamMonitor(),
    queue: new LocalQueueAccess(await MutationQueue.open(new MemoryQueueStore()), new MemoryOutcomeLog()),
    clock: () => clock.now,
    cacheTtlMs: 60_000,
    staleIfErrorMs: 60_000,
    scopes: new ScopeResolver({ claim: undefined, secret: undefined }, () => clock.now),
    persisted: new PersistedQueries(1e6),
    metrics: new ProxyMetrics(),
    typeTtlsMs: new Map(),
    logger,
    triggerReplay: () => undefined,
    afterMutation: () => undefined,
  });
  return { handler, cache, titles };
}

const text = JSON.stringify({ query: '{ posts { nodes { title } } }' });

describe('a fresh hit answer handed out again (issue 46)', () => {
  it('is the same answer within a second, and new when Age, the entry or the scope changes', async () => {
    const clock = { now: 10_000 };
    const { handler, cache, titles } = await handlerAt(clock);
    const miss = await handler.handle({
      body: JSON.parse(text),
      text,
      authorization: undefined,
      idempotencyKey: undefined,
    });
    expect(miss.headers['x-cache']).toBe('MISS');
    const recalled = handler.recall(text);
    if (recalled === undefined) throw new Error('the query was not remembered');

    clock.now = 10_200;
    const first = handler.hitNow(recalled, undefined);
    expect(first?.headers).toMatchObject({
      'x-cache': 'HIT',
      age: '0',
      'cache-control': 'public, max-age=59',
    });
    clock.now = 10_900;
    expect(handler.hitNow(recalled, undefined)).toBe(first);

    clock.now = 11_050; // a second later: Age and max-age moved
    const later = handler.hitNow(recalled, undefined);
    expect(later).not.toBe(first);
    expect(later?.headers).toMatchObject({ age: '1', 'cache-control': 'public, max-age=58' });

    const caller = handler.hitNow(recalled, 'Bearer someone');
    expect(caller).toBeUndefined(); // that caller's scope has no entry yet

    // The entry is stored anew with other bytes: the answer says so (body and ETag).
    cache.invalidate(new Set(['Post']));
    titles.value = 'second';
    await handler.handle({
      body: JSON.parse(text),
      text,
      authorization: undefined,
      idempotencyKey: undefined,
    });
    const refreshed = handler.hitNow(recalled, undefined);
    expect(refreshed).not.toBe(later);
    expect(String(refreshed?.body)).toContain('second');
    expect(refreshed?.headers['etag']).not.toBe(later?.headers['etag']);
    expect(refreshed?.headers['age']).toBe('0');
  });
});
