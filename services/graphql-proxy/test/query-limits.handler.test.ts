import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config.js';
import { PersistedQueries } from '../src/graphql/persisted.js';
import { limitedHandler as setup } from './support/limited-handler.js';

// A refused request touches no store: not the cache, the persisted queries, the queue, nor the
// upstream (so not the breaker either).
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

describe('settings', () => {
  it('reads the limits and names a wrong one', () => {
    expect(loadConfig({ QUERY_MAX_DEPTH: '8', QUERY_MAX_COST: '5000' }, '/tmp').queryLimits).toMatchObject({
      maxDepth: 8,
      maxCost: 5000,
      maxBreadth: 200,
    });
    expect(() => loadConfig({ QUERY_MAX_TOKENS: 'many' }, '/tmp')).toThrow(ConfigError);
    expect(() => loadConfig({ REQUEST_MAX_JSON_DEPTH: '0' }, '/tmp')).toThrow(/REQUEST_MAX_JSON_DEPTH/);
  });
});
