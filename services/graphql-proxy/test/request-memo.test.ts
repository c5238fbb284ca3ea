import { describe, expect, it } from 'vitest';
import { DocumentAnalyser } from '../src/graphql/document.js';
import { RequestMemo } from '../src/proxy/request-memo.js';
import type { UpstreamClient } from '../src/upstream/client.js';
import { limitedHandler } from './support/limited-handler.js';
import { memoryHandler } from './support/memory-handler.js';

/**
 * The exact-bytes fast path (issue 46): a query's body remembered by its text skips parsing and the
 * limits, never the caller's scope, the cache's freshness or an invalidation.
 */

/** A handler in front of an upstream answering every query with the caller it was sent for. */
async function handler() {
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
  const { handler: proxy, cache } = await memoryHandler(upstream);
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
