import { DEFAULT_QUERY_LIMITS } from '@platform/graphql-limits/limits';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { ResponseCache } from '../src/cache/response-cache.js';
import { ScopeResolver } from '../src/cache/scope.js';
import { MemoryCacheStore } from '../src/cache/store.js';
import { DocumentAnalyser } from '../src/graphql/document.js';
import { PersistedQueries } from '../src/graphql/persisted.js';
import { QueryGuard } from '../src/limits/query-guard.js';
import { ProxyMetrics } from '../src/metrics.js';
import { GraphQLHandler } from '../src/proxy/graphql-handler.js';
import { MutationQueue } from '../src/queue/mutation-queue.js';
import { MemoryQueueStore } from '../src/queue/store.js';
import { type UpstreamClient, UpstreamMonitor } from '../src/upstream/client.js';

// A refused request touches no store: not the cache, the persisted queries, the queue, nor the
// upstream (so not the breaker either). SETMODE with an unavailable upstream, where an accepted
// mutation would be queued.
async function setup() {
  const logger = pino({ level: 'silent' });
  const calls: string[] = [];
  const upstream: UpstreamClient = {
    post: async (request) => {
      calls.push(request.body);
      return { kind: 'unavailable', reason: 'connection refused' };
    },
    close: () => undefined,
  };
  const cache = await ResponseCache.open(
    new MemoryCacheStore(),
    { maxEntries: 10, maxBytes: 1e6, memoryBytes: 1e6 },
    logger,
  );
  const queue = await MutationQueue.open(new MemoryQueueStore());
  const monitor = new UpstreamMonitor();
  const handler = new GraphQLHandler({
    mode: 'SETMODE',
    authToken: undefined,
    authTokenForQueries: false,
    cache,
    analyser: new DocumentAnalyser(),
    upstream,
    monitor,
    queue,
    clock: () => 1_000,
    cacheTtlMs: 60_000,
    staleIfErrorMs: 60_000,
    scopes: new ScopeResolver({ claim: undefined, secret: undefined }, () => 1_000),
    persisted: new PersistedQueries(1e6),
    guard: new QueryGuard({ limits: DEFAULT_QUERY_LIMITS }),
    metrics: new ProxyMetrics(),
    typeTtlsMs: new Map(),
    logger,
    triggerReplay: () => undefined,
    afterMutation: () => undefined,
  });
  return { handler, calls, queue, monitor };
}

const request = (body: unknown) => ({ body, authorization: undefined, idempotencyKey: undefined });
const codeOf = (answer: { body: string | Buffer }) =>
  (JSON.parse(String(answer.body)) as { errors?: Array<{ extensions?: Record<string, unknown> }> })
    .errors?.[0]?.extensions;

describe('a refused request touches no store', () => {
  it('a too deep mutation is not queued, not sent, and the breaker does not move', async () => {
    const { handler, calls, queue, monitor } = await setup();
    const deep = `mutation { createPost(input: {title: "x"}) { post { ${'author { node { posts { nodes { '.repeat(6)} id ${'} } } } '.repeat(6)} } } }`;
    const answer = await handler.handle(request({ query: deep }));
    expect(codeOf(answer)).toMatchObject({ code: 'QUERY_LIMIT_EXCEEDED', limit: 'depth' });
    expect(answer.headers['cache-control']).toBe('no-store');
    expect(queue.size).toBe(0);
    expect(calls).toHaveLength(0);
    expect(monitor.state).toBe('unknown');
  });

  it('a refused persisted query is not remembered', async () => {
    const { handler } = await setup();
    const query = `{ ${'posts(first: 100) { nodes { author { node { '.repeat(3)} id ${'} } } } '.repeat(3)} }`;
    const sha256Hash = PersistedQueries.hash(query);
    const extensions = { persistedQuery: { version: 1, sha256Hash } };
    const refused = await handler.handle(request({ query, extensions }));
    expect(codeOf(refused)).toMatchObject({ code: 'QUERY_LIMIT_EXCEEDED', limit: 'cost' });
    const byHash = await handler.handle(request({ extensions }));
    expect(codeOf(byHash)).toMatchObject({ code: 'PERSISTED_QUERY_NOT_FOUND' });
  });

  it('deep variables are refused before the cache key is computed (it recursed: INTERNAL_ERROR)', async () => {
    const { handler, calls } = await setup();
    let variables: unknown = 1;
    for (let i = 0; i < 20_000; i += 1) variables = { a: variables };
    const answer = await handler.handle(
      request({ query: 'query ($a: ID) { post(id: $a) { id } }', variables }),
    );
    expect(codeOf(answer)).toMatchObject({ code: 'QUERY_LIMIT_EXCEEDED', limit: 'jsonDepth', max: 64 });
    expect(calls).toHaveLength(0);
  });

  it('the cost reads the variables: a small page passes, the same document with a large one does not', async () => {
    const { handler, calls } = await setup();
    const query =
      'query ($n: Int) { posts(first: $n) { nodes { categories(first: $n) { nodes { posts(first: $n) { nodes { id } } } } } } }';
    const small = await handler.handle(request({ query, variables: { n: 5 } }));
    expect(codeOf(small)).toMatchObject({ code: 'OFFLINE_CACHE_MISS' });
    expect(calls).toHaveLength(1);
    const large = await handler.handle(request({ query, variables: { n: 100 } }));
    expect(codeOf(large)).toMatchObject({ code: 'QUERY_LIMIT_EXCEEDED', limit: 'cost' });
    expect(calls).toHaveLength(1);
  });
});
