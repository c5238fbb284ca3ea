import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { ResponseCache } from '../src/cache/response-cache.js';
import { ScopeResolver } from '../src/cache/scope.js';
import { MemoryCacheStore } from '../src/cache/store.js';
import { DocumentAnalyser } from '../src/graphql/document.js';
import { PersistedQueries } from '../src/graphql/persisted.js';
import { ProxyMetrics } from '../src/metrics.js';
import { GraphQLHandler } from '../src/proxy/graphql-handler.js';
import { RequestMemo } from '../src/proxy/request-memo.js';
import { LocalQueueAccess } from '../src/queue/access.js';
import { MutationQueue } from '../src/queue/mutation-queue.js';
import { MemoryOutcomeLog } from '../src/queue/outcomes.js';
import { MemoryQueueStore } from '../src/queue/store.js';
import { type UpstreamClient, UpstreamMonitor } from '../src/upstream/client.js';
import { limitedHandler } from './support/limited-handler.js';

/**
 * The exact-bytes fast path (issue 46): a query's body remembered by its text skips parsing and the
 * limits, never the caller's scope, the cache's freshness or an invalidation.
 */

/** A handler in front of an upstream answering every query with the caller it was sent for. */
async function handler() {
  const logger = pino({ level: 'silent' });
  const calls: Array<string | undefined> = [];
  const upstream: UpstreamClient = {
    post: async (request) => {
      calls.push(request.authorization);
      const data = {
        posts: { nodes: [{ __typename: 'Post', id: 'cG9zdDox', title: `for ${request.authorization}` }] },
      };
      return { kind: 'answered', status: 200, text: JSON.stringify({ data }), body: { data } };
    },
    close: () => undefined,
  };
  const cache = await ResponseCache.open(
    new MemoryCacheStore(),
    { maxEntries: 10, maxBytes: 1e6, memoryBytes: 1e6 },
    logger,
  );
  const proxy = new GraphQLHandler({
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
  return { proxy, calls, cache };
}

const text = JSON.stringify({ query: '{ posts { nodes { id title } } }' });
const titleOf = (body: string | Buffer) =>
  (JSON.parse(String(body)) as { data: { posts: { nodes: Array<{ title: string }> } } }).data.posts.nodes[0]
    ?.title;

describe('exact-bytes fast path', () => {
  it('never answers one caller from another caller’s entry for the same bytes', async () => {
    const { proxy, calls } = await handler();
    const alice = 'Bearer alice';
    const bob = 'Bearer bob';
    const first = await proxy.handle({
      body: JSON.parse(text),
      text,
      authorization: alice,
      idempotencyKey: undefined,
    });
    const recalled = proxy.recall(text);
    expect(recalled).toBeDefined();
    if (recalled === undefined) return;
    // Alice's entry is fresh in memory: the synchronous hit, with her key.
    const hit = proxy.hitNow(recalled, alice);
    expect(hit?.headers['x-cache']).toBe('HIT');
    expect(hit?.headers['x-cache-key']).toBe(first.headers['x-cache-key']);
    expect(titleOf(hit?.body ?? '')).toBe('for Bearer alice');
    // The same bytes from Bob (and from an anonymous caller): no synchronous hit, his own miss upstream.
    expect(proxy.hitNow(recalled, bob)).toBeUndefined();
    const bobs = await proxy.handleRecalled(recalled, bob);
    expect(bobs.headers['x-cache']).toBe('MISS');
    expect(bobs.headers['x-cache-key']).not.toBe(first.headers['x-cache-key']);
    expect(titleOf(bobs.body)).toBe('for Bearer bob');
    expect(proxy.hitNow(recalled, undefined)).toBeUndefined();
    expect(titleOf((await proxy.handleRecalled(recalled, undefined)).body)).toBe('for undefined');
    expect(calls).toEqual([alice, bob, undefined]);
    // Alternating callers, each gets their own entry (the key remembered for the last scope is not reused).
    for (const [who, title] of [
      [alice, 'for Bearer alice'],
      [bob, 'for Bearer bob'],
      [alice, 'for Bearer alice'],
      [undefined, 'for undefined'],
      [bob, 'for Bearer bob'],
    ] as const) {
      expect(titleOf(proxy.hitNow(recalled, who)?.body ?? '')).toBe(title);
    }
    expect(calls).toHaveLength(3);
  });

  it('does not serve a remembered query from an entry a mutation invalidated', async () => {
    const { proxy, calls, cache } = await handler();
    await proxy.handle({ body: JSON.parse(text), text, authorization: undefined, idempotencyKey: undefined });
    const recalled = proxy.recall(text);
    if (recalled === undefined) throw new Error('not remembered');
    expect(proxy.hitNow(recalled, undefined)).toBeDefined();
    cache.invalidate(new Set(['id:cG9zdDox']));
    expect(proxy.hitNow(recalled, undefined)).toBeUndefined();
    expect((await proxy.handleRecalled(recalled, undefined)).headers['x-cache']).toBe('MISS');
    expect(calls).toHaveLength(2);
  });

  it('remembers only queries that passed every check, and no persisted-query bodies', async () => {
    const { handler: limited } = await limitedHandler();
    const deep = `{ ${'posts { nodes { author { node { '.repeat(8)} id ${'} } } } '.repeat(8)} }`;
    const deepText = JSON.stringify({ query: deep });
    for (let i = 0; i < 2; i += 1) {
      const refused = await limited.handle({
        body: JSON.parse(deepText),
        text: deepText,
        authorization: undefined,
        idempotencyKey: undefined,
      });
      expect(String(refused.body)).toContain('QUERY_LIMIT_EXCEEDED');
      expect(limited.recall(deepText)).toBeUndefined();
    }
    const mutation = JSON.stringify({ query: 'mutation { createTag(input: {name: "a"}) { tag { id } } }' });
    await limited.handle({
      body: JSON.parse(mutation),
      text: mutation,
      authorization: undefined,
      idempotencyKey: undefined,
    });
    expect(limited.recall(mutation)).toBeUndefined();
    const memo = new RequestMemo();
    const analysis = new DocumentAnalyser().analyse('{ a { b } }', null);
    if (!analysis.ok) throw new Error('not parsed');
    const payload = { query: '{ a { b } }', variables: null, operationName: null };
    memo.remember('x', { query: '{ a { b } }', extensions: {} }, analysis.operation, payload);
    expect(memo.recall('x')).toBeUndefined();
    memo.remember('y', { query: '{ a { b } }' }, analysis.operation, payload);
    expect(memo.recall('y')?.operation).toBe(analysis.operation);
  });

  it('is bounded in entries, dropping the least recently used first', () => {
    const memo = new RequestMemo({ maxEntries: 2 });
    const analysis = new DocumentAnalyser().analyse('{ a { b } }', null);
    if (!analysis.ok) throw new Error('not parsed');
    const payload = { query: '{ a { b } }', variables: null, operationName: null };
    for (const name of ['a', 'b']) memo.remember(name, {}, analysis.operation, payload);
    memo.recall('a');
    memo.remember('c', {}, analysis.operation, payload);
    expect([
      memo.recall('a') !== undefined,
      memo.recall('b') !== undefined,
      memo.recall('c') !== undefined,
    ]).toEqual([true, false, true]);
    expect(memo.size).toBe(2);
  });
});
