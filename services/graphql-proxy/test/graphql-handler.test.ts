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
import { type UpstreamClient, UpstreamMonitor, type UpstreamOutcome } from '../src/upstream/client.js';

/** An upstream whose answers the test releases one by one, to order events deterministically. */
function gatedUpstream() {
  const waiting: Array<(outcome: UpstreamOutcome) => void> = [];
  const client: UpstreamClient = {
    post: () => new Promise((resolve) => waiting.push(resolve)),
    close: () => undefined,
  };
  const answer = (index: number, data: unknown) => {
    const text = JSON.stringify({ data });
    waiting[index]?.({ kind: 'answered', status: 200, text, body: { data } });
  };
  return { client, waiting, answer };
}

async function handlerWith(upstream: UpstreamClient) {
  const logger = pino({ level: 'silent' });
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
    clock: () => 1_000,
    cacheTtlMs: 60_000,
    staleIfErrorMs: 60_000,
    scopes: new ScopeResolver({ claim: undefined, secret: undefined }, () => 1_000),
    persisted: new PersistedQueries(1e6),
    metrics: new ProxyMetrics(),
    typeTtlsMs: new Map(),
    logger,
    triggerReplay: () => undefined,
    afterMutation: () => undefined,
  });
  return { handler, cache };
}

const request = {
  body: { query: '{ posts { nodes { title } } }' },
  authorization: undefined,
  idempotencyKey: undefined,
};
const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('GraphQLHandler and mutations racing queries', () => {
  it('does not let a query that started before an invalidation serve or cache pre-mutation data as fresh', async () => {
    const upstream = gatedUpstream();
    const { handler, cache } = await handlerWith(upstream.client);
    const before = handler.handle(request);
    await tick();
    cache.invalidate(new Set(['Post'])); // a mutation of posts succeeded meanwhile
    const after = handler.handle(request);
    await tick();
    expect(upstream.waiting).toHaveLength(2); // the second caller did not join the older request
    upstream.answer(0, { posts: { nodes: [{ title: 'old' }] } });
    expect(String((await before).body)).toContain('old');
    upstream.answer(1, { posts: { nodes: [{ title: 'new' }] } });
    expect(String((await after).body)).toContain('new');
    const third = await handler.handle(request);
    expect(third.headers['x-cache']).toBe('HIT');
    expect(String(third.body)).toContain('new');
  });

  it('stores a raced answer as invalidated, so the next query asks upstream again', async () => {
    const upstream = gatedUpstream();
    const { handler, cache } = await handlerWith(upstream.client);
    const only = handler.handle(request);
    await tick();
    cache.invalidate(new Set(['Post']));
    upstream.answer(0, { posts: { nodes: [{ title: 'old' }] } });
    await only;
    const next = handler.handle(request);
    await tick();
    expect(upstream.waiting).toHaveLength(2);
    upstream.answer(1, { posts: { nodes: [] } });
    expect((await next).headers['x-cache']).toBe('MISS');
  });
});
