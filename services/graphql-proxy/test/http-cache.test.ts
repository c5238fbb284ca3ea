import { createHash, createHmac } from 'node:crypto';
import http from 'node:http';
import { startMetricsListener } from '@platform/observability/metrics-listener';
import { listenOnFreePort, type RunningApp } from '@platform/testkit/app';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { buildApp, type ProxyApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { getJson, gql } from './support/client.js';
import { tempDir } from './support/processes.js';

/**
 * HTTP cache semantics (issue 19). The upstream is a small real HTTP server standing in for a CMS
 * whose Cache-Control headers the test chooses: the blog upstream sends none.
 */
let dir: Awaited<ReturnType<typeof tempDir>>;
let upstream: RunningApp;
let app: ProxyApp;
let url: string;
const seen: string[] = [];
let clockOffsetMs = 0;
/** Set by a test whose lifetimes are a second or two: real time then stands still. */
let frozenAt: number | undefined;
const ADMIN = { authorization: 'Bearer admin-token-for-http-cache' };
const SECRET = 'jwt-secret-for-scope-tests';

/** The answer of the fake upstream: the Cache-Control it sends is chosen by a marker in the query. */
function answer(query: string): { headers: Record<string, string>; body: unknown } {
  const counter = seen.filter((q) => q === query).length;
  const data = { posts: { nodes: [{ __typename: 'Post', id: 'cG9zdDox', title: `v${counter}` }] } };
  if (query.includes('noStore')) return { headers: { 'cache-control': 'no-store' }, body: { data } };
  if (query.includes('private'))
    return { headers: { 'cache-control': 'private, max-age=60' }, body: { data } };
  if (query.includes('short')) return { headers: { 'cache-control': 'max-age=1' }, body: { data } };
  if (query.includes('categories')) {
    return {
      headers: {},
      body: { data: { categories: { nodes: [{ __typename: 'Category', id: 'dGVybTox' }] } } },
    };
  }
  return { headers: {}, body: { data } };
}

function jwt(claims: Record<string, unknown>): string {
  const encode = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const head = `${encode({ alg: 'HS256', typ: 'JWT' })}.${encode(claims)}`;
  return `${head}.${createHmac('sha256', SECRET).update(head).digest('base64url')}`;
}

beforeAll(async () => {
  dir = await tempDir('proxy-http-cache');
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const { query } = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { query: string };
      const { headers, body } = answer(query);
      seen.push(query);
      response.writeHead(200, { 'content-type': 'application/json', ...headers });
      response.end(JSON.stringify(body));
    });
  });
  upstream = await listenOnFreePort({
    listen: ({ port, host }) =>
      new Promise((resolve) =>
        server.listen(port, host, () =>
          resolve(`http://${host}:${(server.address() as { port: number }).port}`),
        ),
      ),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  });
  const config = loadConfig(
    {
      UPSTREAM_GRAPHQL_ENDPOINT: `${upstream.url}/graphql`,
      PATHS_BASE_DIR: dir.path,
      ADMIN_TOKEN: ADMIN.authorization.slice('Bearer '.length),
      CACHE_TTL_SECONDS: '300',
      CACHE_TTL_BY_TYPE: 'Category=2',
      CACHE_STALE_WHILE_REVALIDATE_SECONDS: '0',
      CACHE_SCOPE_CLAIM: 'sub',
      CACHE_SCOPE_JWT_SECRET: SECRET,
    },
    dir.path,
  );
  // The cache's clock, moved forward by the test instead of waiting for lifetimes to pass.
  app = await buildApp(config, pino({ level: 'silent' }), () => (frozenAt ?? Date.now()) + clockOffsetMs);
  url = await app.fastify.listen({ port: 0, host: '127.0.0.1' });
});

afterAll(async () => {
  await app?.close();
  await upstream?.close();
  await dir?.remove();
});

describe('upstream Cache-Control and per-type TTLs', () => {
  it('does not store no-store answers, nor private answers for anonymous callers', async () => {
    const noStore = '{ posts { nodes { id title noStore: slug } } }';
    await gql(url, noStore);
    expect((await gql(url, noStore)).headers.get('x-cache')).toBe('MISS');
    expect((await gql(url, noStore)).headers.get('cache-control')).toBe('no-store');
    const priv = '{ posts { nodes { id title private: slug } } }';
    await gql(url, priv);
    expect((await gql(url, priv)).headers.get('x-cache')).toBe('MISS');
    const token = { authorization: `Bearer ${jwt({ sub: 'alice' })}` };
    await gql(url, priv, undefined, token);
    const hit = await gql(url, priv, undefined, token);
    expect(hit.headers.get('x-cache')).toBe('HIT');
    expect(hit.headers.get('cache-control')).toMatch(/^private, max-age=\d+$/);
  });

  it('takes the lifetime from max-age, else from CACHE_TTL_BY_TYPE', async () => {
    // max-age=1: on the real clock a second between two requests of a loaded machine ends it early.
    frozenAt = Date.now();
    onTestFinished(() => {
      frozenAt = undefined;
    });
    const short = '{ posts { nodes { id title short: slug } } }';
    await gql(url, short);
    const hit = await gql(url, short);
    expect(hit.headers.get('x-cache')).toBe('HIT');
    expect(hit.headers.get('cache-control')).toMatch(/max-age=[01]$/);
    const categories = '{ categories { nodes { id } } }';
    await gql(url, categories);
    expect((await gql(url, categories)).headers.get('cache-control')).toMatch(/^public, max-age=[12]$/);
    clockOffsetMs += 2100; // past max-age=1 and Category=2
    expect((await gql(url, short)).headers.get('x-cache')).toBe('MISS');
    expect((await gql(url, categories)).headers.get('x-cache')).toBe('MISS');
  });
});

describe('HTTP caching headers and GET', () => {
  it('sends Cache-Control, Age and an ETag, and 304 on If-None-Match', async () => {
    const query = '{ posts { nodes { id title etag: slug } } }';
    const first = await gql(url, query);
    expect(first.headers.get('cache-control')).toMatch(/^public, max-age=300$/);
    expect(first.headers.get('age')).toBe('0');
    const etag = first.headers.get('etag') ?? '';
    expect(etag).toMatch(/^"[0-9a-f]+"$/);
    const again = await gql(url, query);
    expect(again.headers.get('etag')).toBe(etag);
    expect(again.headers.get('age')).toMatch(/^\d+$/);
    const notModified = await fetch(`${url}/graphql?query=${encodeURIComponent(query)}`, {
      headers: { 'if-none-match': etag },
    });
    expect(notModified.status).toBe(304);
    expect(await notModified.text()).toBe('');
  });

  it('answers GET /graphql?query=... for queries, refuses mutations over GET', async () => {
    const query = '{ posts { nodes { id title get: slug } } }';
    const viaGet = await fetch(
      `${url}/graphql?query=${encodeURIComponent(query)}&variables=${encodeURIComponent('{}')}`,
    );
    expect(viaGet.status).toBe(200);
    expect(viaGet.headers.get('x-cache')).toBe('MISS');
    expect(((await viaGet.json()) as { data: unknown }).data).toBeTruthy();
    expect((await gql(url, query)).headers.get('x-cache')).toBe('HIT');
    const mutation = await fetch(`${url}/graphql?query=${encodeURIComponent('mutation { a }')}`);
    expect(mutation.status).toBe(405);
    expect(await mutation.json()).toMatchObject({ errors: [{ extensions: { code: 'METHOD_NOT_ALLOWED' } }] });
  });
});

describe('automatic persisted queries', () => {
  it('answers an unknown hash with PersistedQueryNotFound, then serves the hash alone once registered', async () => {
    const query = '{ posts { nodes { id title apq: slug } } }';
    const sha256Hash = createHash('sha256').update(query).digest('hex');
    const extensions = { persistedQuery: { version: 1, sha256Hash } };
    const post = (body: unknown) =>
      getJson<{ data?: unknown; errors?: Array<{ message: string; extensions: { code: string } }> }>(
        `${url}/graphql`,
        { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) },
      );
    const unknown = await post({ extensions });
    expect(unknown.body.errors?.[0]).toMatchObject({
      message: 'PersistedQueryNotFound',
      extensions: { code: 'PERSISTED_QUERY_NOT_FOUND' },
    });
    const wrong = await post({ query: '{ other }', extensions });
    expect(wrong.body.errors?.[0]?.extensions.code).toBe('BAD_REQUEST');
    expect((await post({ query, extensions })).body.data).toBeTruthy();
    expect((await post({ extensions })).body.data).toBeTruthy();
    const viaGet = await fetch(`${url}/graphql?extensions=${encodeURIComponent(JSON.stringify(extensions))}`);
    expect(viaGet.headers.get('x-cache')).toBe('HIT');
  });
});

describe('cache scope by a JWT claim', () => {
  it('keeps the hits of a user whose token rotates, and never shares them with another user', async () => {
    const query = '{ posts { nodes { id title scoped: slug } } }';
    const first = await gql(url, query, undefined, { authorization: `Bearer ${jwt({ sub: 'bob', n: 1 })}` });
    const rotated = await gql(url, query, undefined, {
      authorization: `Bearer ${jwt({ sub: 'bob', n: 2 })}`,
    });
    expect(rotated.headers.get('x-cache')).toBe('HIT');
    expect(rotated.headers.get('x-cache-key')).toBe(first.headers.get('x-cache-key'));
    const other = await gql(url, query, undefined, { authorization: `Bearer ${jwt({ sub: 'carol' })}` });
    expect(other.headers.get('x-cache')).toBe('MISS');
    // A token with a forged signature does not get bob's scope.
    const forged = `Bearer ${jwt({ sub: 'bob' }).slice(0, -4)}AAAA`;
    expect((await gql(url, query, undefined, { authorization: forged })).headers.get('x-cache')).toBe('MISS');
  });
});

describe('exact-bytes fast path over HTTP (issue 46)', () => {
  it('answers the same body bytes from each caller its own entry', async () => {
    const query = '{ posts { nodes { id title fastPath: slug } } }';
    const dave = { authorization: `Bearer ${jwt({ sub: 'dave' })}` };
    const erin = { authorization: 'Bearer an-opaque-token-for-erin' };
    const first = await gql(url, query, undefined, dave);
    expect((await gql(url, query, undefined, dave)).headers.get('x-cache')).toBe('HIT');
    const other = await gql(url, query, undefined, erin);
    expect(other.headers.get('x-cache')).toBe('MISS');
    const anonymous = await gql(url, query);
    expect(anonymous.headers.get('x-cache')).toBe('MISS');
    const keys = new Set([first, other, anonymous].map((answer) => answer.headers.get('x-cache-key')));
    expect(keys.size).toBe(3);
    for (const [who, expected] of [
      [dave, first],
      [erin, other],
      [{}, anonymous],
      [dave, first],
    ] as const) {
      const again = await gql(url, query, undefined, who);
      expect(again.headers.get('x-cache')).toBe('HIT');
      expect(again.headers.get('x-cache-key')).toBe(expected.headers.get('x-cache-key'));
      expect(again.body).toEqual(expected.body);
    }
  });
});

describe('purge API and metrics', () => {
  it('purges by key, by type, by type and id, and everything; only for the admin', async () => {
    const a = await gql(url, '{ posts { nodes { id title purgeA: slug } } }');
    await gql(url, '{ categories { nodes { id purge: slug } } }');
    const purge = (body: unknown, headers: Record<string, string> = ADMIN) =>
      getJson<{ purged: number }>(`${url}/cache/purge`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify(body),
      });
    expect((await purge({ all: true }, {})).status).toBe(401);
    expect((await purge({ key: a.headers.get('x-cache-key') })).body.purged).toBe(1);
    expect((await gql(url, '{ posts { nodes { id title purgeA: slug } } }')).headers.get('x-cache')).toBe(
      'MISS',
    );
    expect((await purge({ type: 'Category' })).body.purged).toBeGreaterThan(0);
    expect((await gql(url, '{ categories { nodes { id purge: slug } } }')).headers.get('x-cache')).toBe(
      'MISS',
    );
    expect((await purge({ type: 'Post', id: 'cG9zdDox' })).body.purged).toBeGreaterThan(0);
    expect((await purge({ all: true })).body.purged).toBeGreaterThan(0);
    expect((await purge({ nothing: true })).status).toBe(400);
  });

  it('exposes Prometheus metrics on the metrics listener, not on the public port', async () => {
    expect((await fetch(`${url}/metrics`, { headers: ADMIN })).status).toBe(404);
    const listener = await startMetricsListener(app.metrics, { host: '127.0.0.1', port: 0 });
    onTestFinished(() => listener.close());
    const response = await fetch(listener.url as string);
    expect(response.headers.get('content-type')).toMatch(/^text\/plain/);
    const text = await response.text();
    for (const name of [
      'graphql_proxy_cache_hits_total',
      'graphql_proxy_cache_misses_total',
      'graphql_proxy_cache_stale_served_total',
      'graphql_proxy_upstream_duration_seconds_bucket',
      'graphql_proxy_breaker_open',
      'graphql_proxy_queue_depth',
    ]) {
      expect(text).toContain(name);
    }
    expect(text).toMatch(/graphql_proxy_cache_hits_total [1-9]/);
    // POST /graphql bypasses Fastify: its answers are recorded by the listener (routes/graphql.ts).
    expect(text).toMatch(/http_requests_total\{method="POST",route="\/graphql",status_class="2xx"\} [1-9]/);
    expect(text).toMatch(/http_request_duration_seconds_count\{method="POST",route="\/graphql"\} [1-9]/);
  });
});
