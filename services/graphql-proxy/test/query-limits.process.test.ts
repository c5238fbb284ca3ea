import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getJson, gql } from './support/client.js';
import { type Blog, type ProxyProcess, startBlog, startProxy, tempDir } from './support/processes.js';
import { type Relay, startRelay } from './support/relay.js';

// Issue 28 item 4: one anonymous query nested twelve levels deep, sent through the proxy, took the
// blog down (its /health silent), opened the proxy's breaker, and every other client's uncached query
// got OFFLINE_CACHE_MISS; `variables` nested 20,000 levels deep got 200 INTERNAL_ERROR. Here: the real
// blog process behind a relay that counts what reaches it, the real proxy process in front.
let dir: Awaited<ReturnType<typeof tempDir>>;
let blog: Blog;
let relay: Relay;
let proxy: ProxyProcess;

beforeAll(async () => {
  dir = await tempDir('proxy-limits');
  blog = await startBlog(path.join(dir.path, 'blog'));
  relay = await startRelay(blog.graphqlUrl);
  proxy = await startProxy(path.join(dir.path, 'proxy'), {
    UPSTREAM_GRAPHQL_ENDPOINT: relay.url,
    UPSTREAM_TIMEOUT_MS: '5000',
  });
});

afterAll(async () => {
  await proxy?.close();
  await relay?.close();
  await blog?.close();
  await dir?.remove();
});

/** The issue's query: `levels` nested `posts(first:100){ nodes{ author{ node{ ...`. */
function issueQuery(levels: number): string {
  let inner = 'id';
  for (let level = 0; level < levels; level += 1) {
    inner = `posts(first:100){ nodes{ author{ node{ ${inner} } } } }`;
  }
  return `{ ${inner} }`;
}

/** Posts a raw JSON body (built as text: a 20,000-level value would overflow JSON.stringify here). */
async function postRaw(body: string) {
  const response = await fetch(`${proxy.url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body,
  });
  return {
    status: response.status,
    body: (await response.json()) as { errors?: Array<Record<string, unknown>> },
  };
}

async function health(url: string): Promise<Record<string, unknown>> {
  const response = await fetch(`${url}/health`, { signal: AbortSignal.timeout(5_000) });
  return (await response.json()) as Record<string, unknown>;
}

describe('the issue query through a real proxy in front of a real blog', () => {
  it.each([3, 12, 30])(
    'refuses %i levels before the cache or the upstream, and the blog, the breaker and other clients are unaffected',
    async (levels) => {
      const before = relay.bodies.length;
      const entriesBefore = ((await health(proxy.url))['cache'] as { entries: number }).entries;
      const answer = await gql(proxy.url, issueQuery(levels));
      expect(answer.status).toBe(200);
      const error = answer.body.errors?.[0];
      expect(error?.extensions).toMatchObject({ code: 'QUERY_LIMIT_EXCEEDED' });
      expect(error?.extensions?.['max']).toEqual(expect.any(Number));
      expect(error?.extensions?.['measured']).toBeGreaterThan(error?.extensions?.['max'] as number);
      expect(error?.message).toMatch(/the limit is \d+ \((QUERY_MAX_\w+|2 x QUERY_MAX_DEPTH \+ 8)\)/);
      expect(answer.headers.get('x-cache')).toBeNull();
      expect(answer.body.data).toBeUndefined();
      // Nothing reached the upstream; nothing was cached; the breaker stays closed.
      expect(relay.bodies.slice(before).some((body) => body.includes('author'))).toBe(false);
      const after = await health(proxy.url);
      expect(after).toMatchObject({ breaker: 'closed' });
      expect((after['cache'] as { entries: number }).entries).toBe(entriesBefore);
      // The blog answers its health at once, and another client's uncached query is answered.
      expect(await health(blog.url)).toMatchObject({ status: 'ok' });
      const other = await gql(proxy.url, `{ tags(first: ${levels}) { nodes { id name } } }`);
      expect(other.body.errors).toBeUndefined();
      expect(other.headers.get('x-cache')).toBe('MISS');
      expect(other.body.data).toMatchObject({ tags: { nodes: expect.any(Array) } });
    },
  );

  it('says which limit in the message and extensions: depth, then cost', async () => {
    const deep = await gql(proxy.url, issueQuery(5));
    expect(deep.body.errors?.[0]).toMatchObject({
      message: 'The query nests fields 21 levels deep; the limit is 20 (QUERY_MAX_DEPTH)',
      extensions: { code: 'QUERY_LIMIT_EXCEEDED', limit: 'depth', measured: 21, max: 20 },
    });
    const costly = await gql(proxy.url, issueQuery(3));
    expect(costly.body.errors?.[0]?.extensions).toMatchObject({ limit: 'cost', max: 100_000 });
    // Two levels are a real query (an author's other posts): answered by the blog.
    const fine = await gql(proxy.url, issueQuery(2));
    expect(fine.body.errors).toBeUndefined();
    expect(fine.body.data).toMatchObject({ posts: { nodes: expect.any(Array) } });
  });
});

describe('a proxy whose own limits are lifted', () => {
  it('forwards the issue query, the blog refuses it itself, and the breaker stays closed', {
    timeout: 120_000,
  }, async () => {
    const lifted = await startProxy(path.join(dir.path, 'lifted'), {
      UPSTREAM_GRAPHQL_ENDPOINT: relay.url,
      UPSTREAM_TIMEOUT_MS: '5000',
      QUERY_MAX_DEPTH: '1000',
      QUERY_MAX_COST: String(Number.MAX_VALUE),
    });
    try {
      const before = relay.bodies.length;
      const answer = await gql(lifted.url, issueQuery(12));
      // It reached the blog this time, which answered with its own refusal, passed through uncached.
      expect(relay.bodies.slice(before).some((body) => body.includes('author'))).toBe(true);
      expect(answer.body.errors?.[0]?.extensions).toMatchObject({ code: 'QUERY_LIMIT_EXCEEDED' });
      expect(answer.headers.get('x-upstream-status')).toBe('200');
      expect(await health(lifted.url)).toMatchObject({ breaker: 'closed', cache: { entries: 0 } });
      expect(await health(blog.url)).toMatchObject({ status: 'ok' });
      const other = await gql(lifted.url, '{ categories(first: 3) { nodes { name } } }');
      expect(other.body.errors).toBeUndefined();
    } finally {
      await lifted.close();
    }
  });
});

describe('hostile bodies get a client error, never INTERNAL_ERROR', () => {
  it('variables nested 20,000 levels deep', async () => {
    const before = relay.bodies.length;
    const variables = `${'{"a":'.repeat(20_000)}1${'}'.repeat(20_000)}`;
    const answer = await postRaw(
      `{"query":"query ($a: ID) { post(id: $a) { id } }","variables":${variables}}`,
    );
    expect(answer.status).toBe(200);
    expect(answer.body.errors?.[0]).toMatchObject({
      message:
        'The request nests JSON (variables or extensions) more than 64 levels deep; the limit is 64 (REQUEST_MAX_JSON_DEPTH)',
      extensions: { code: 'QUERY_LIMIT_EXCEEDED', limit: 'jsonDepth', max: 64 },
    });
    const arrays = `${'['.repeat(100_000)}${']'.repeat(100_000)}`;
    const inExtensions = await postRaw(`{"query":"{ posts { nodes { id } } }","extensions":{"x":${arrays}}}`);
    expect(inExtensions.body.errors?.[0]?.extensions).toMatchObject({ code: 'QUERY_LIMIT_EXCEEDED' });
    // A deep body that is not an object at all is the documented BAD_REQUEST.
    const bare = await postRaw(arrays);
    expect(bare.body.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_REQUEST' });
    expect(relay.bodies.length).toBe(before);
    expect(await health(proxy.url)).toMatchObject({ breaker: 'closed' });
  });

  it('a huge query text, many operations, 10,000 aliases, deeply nested selections, repeated directives', async () => {
    const before = relay.bodies.length;
    const hostile: Array<[string, string, string | undefined]> = [
      ['tokens', `{ ${'__typename '.repeat(60_000)}}`, undefined],
      ['tokens', Array.from({ length: 20_000 }, (_, i) => `query Q${i} { __typename }`).join(' '), 'Q7'],
      ['tokens', `{ ${Array.from({ length: 10_000 }, (_, i) => `a${i}: __typename`).join(' ')} }`, undefined],
      ['breadth', `{ ${Array.from({ length: 1_000 }, (_, i) => `a${i}: __typename`).join(' ')} }`, undefined],
      ['nesting', `${'{ posts { nodes '.repeat(20_000)}${'} } '.repeat(20_000)}}`, undefined],
      ['directives', `{ posts { nodes { id ${'@include(if: true) '.repeat(100)} } } }`, undefined],
    ];
    for (const [limit, query, operationName] of hostile) {
      const answer = await postRaw(JSON.stringify({ query, operationName }));
      expect(answer.status, limit).toBe(200);
      expect(answer.body.errors?.[0]?.['extensions'], limit).toMatchObject({
        code: 'QUERY_LIMIT_EXCEEDED',
        limit,
      });
    }
    expect(relay.bodies.length).toBe(before);
    expect(await health(proxy.url)).toMatchObject({ breaker: 'closed' });
  });

  it('a fragment cycle is refused without looping', async () => {
    const answer = await gql(
      proxy.url,
      '{ posts { nodes { ...A } } } fragment A on Post { id ...B } fragment B on Post { title ...A }',
    );
    expect(answer.body.errors?.[0]?.extensions).toMatchObject({ code: 'GRAPHQL_VALIDATION_FAILED' });
  });
});

describe('real queries still pass', () => {
  it("GraphiQL's introspection query and a WPGraphQL query with fragments and aliases", async () => {
    const { getIntrospectionQuery } = await import('graphql');
    const introspection = await gql(proxy.url, getIntrospectionQuery());
    expect(introspection.body.errors).toBeUndefined();
    expect(introspection.body.data).toHaveProperty('__schema');
    const query = `
      query Home($first: Int = 100) {
        recent: posts(first: $first) { nodes { ...Card categories(first: 100) { nodes { name } } } }
        menu: categories(first: 100) { nodes { name slug } }
      }
      fragment Card on Post { id title slug author { node { name } } tags { nodes { name } } }`;
    const home = await gql(proxy.url, query);
    expect(home.body.errors).toBeUndefined();
    expect(home.body.data).toMatchObject({ recent: { nodes: expect.arrayContaining([expect.anything()]) } });
    const { body } = await getJson<{ breaker: string }>(`${proxy.url}/health`);
    expect(body.breaker).toBe('closed');
  });
});
