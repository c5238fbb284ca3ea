/**
 * The proxy's HTTP routes fuzzed from their OpenAPI description (test/support/openapi.ts; issue 18):
 * valid and broken requests over a real listener, in front of the real blog upstream, management
 * calls with the real admin token. No 5xx, every 4xx in the documented shape (GraphQL errors on
 * /graphql, `{statusCode, message, error}` on the management routes), and a refused request leaves
 * the mutation queue, the local data and the cache as they were. `FUZZ_RUNS` / `FUZZ_SEED`: see
 * CONTRIBUTING.md.
 */
import path from 'node:path';
import { listOperations } from '@platform/testkit/fuzz/openapi';
import { fuzzService } from '@platform/testkit/fuzz/run';
import { fuzzSettings } from '@platform/testkit/fuzz/settings';
import pino from 'pino';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { buildApp, type ProxyApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { HttpErrorShape, proxyDocument } from './support/openapi.js';
import { type Blog, startBlog, tempDir } from './support/processes.js';

const ADMIN_TOKEN = 'admin-token-for-the-fuzz';
let dir: Awaited<ReturnType<typeof tempDir>>;
let blog: Blog;
let proxy: ProxyApp;
let url: string;

beforeAll(async () => {
  dir = await tempDir('proxy-fuzz');
  blog = await startBlog(path.join(dir.path, 'blog'));
  // CRUDMODE: mutations go straight upstream, so no background replay changes the queue between two
  // requests; no sync at start, so the local data changes only through the fuzzed requests.
  const config = loadConfig(
    {
      UPSTREAM_GRAPHQL_ENDPOINT: blog.graphqlUrl,
      GRAPHQL_MODE: 'CRUDMODE',
      ADMIN_TOKEN,
      LOCAL_SYNC_ON_START: 'false',
      PATHS_BASE_DIR: dir.path,
    },
    path.join(dir.path, 'cwd'),
  );
  proxy = await buildApp(config, pino({ level: 'silent' }));
  const address = await proxy.fastify.listen({ port: 0, host: '127.0.0.1' });
  url = address.replace('localhost', '127.0.0.1');
});
afterAll(async () => {
  await proxy?.close();
  await blog?.stop();
  await dir?.remove();
});

/** The state a refused request must not change, read through the proxy's own management API. */
async function digest(): Promise<string> {
  const headers = { authorization: `Bearer ${ADMIN_TOKEN}` };
  const [queue, local, health] = await Promise.all(
    ['/queue', '/local/data', '/health'].map(async (p) => (await fetch(`${url}${p}`, { headers })).json()),
  );
  return JSON.stringify([queue, local, (health as { cache?: unknown }).cache]);
}

/** 300 requests in `npm test`; FUZZ_RUNS / FUZZ_SEED override (testkit fuzz/settings.ts). */
const settings = fuzzSettings(300);

it(
  'answers every generated request without a 5xx, in its error shape, changing nothing when refusing',
  async () => {
    const stats = await fuzzService(
      {
        name: 'graphql-proxy',
        baseUrl: url,
        operations: listOperations(proxyDocument),
        errorShape: HttpErrorShape,
        sign: (draft, operation) =>
          operation.security.length > 0
            ? { ...draft, headers: [...draft.headers, ['authorization', `Bearer ${ADMIN_TOKEN}`]] }
            : draft,
        examples: {
          query: [
            '{ posts(first: 3) { nodes { id title } } }',
            'query Posts($first: Int) { posts(first: $first) { nodes { id title slug } } }',
            '{ categories(first: 5) { nodes { id name } } }',
            'mutation { __typename }',
            'subscription { x }',
            '{',
          ],
          variables: [{ first: 2 }, { first: 1e19 }, { first: -1 }],
          type: ['Post', 'Category'],
          all: [true],
        },
        // Sent once before the random requests, whatever the seed.
        samples: { 'POST /graphql': [{ query: '{ posts(first: 3) { nodes { id title } } }' }] },
        digest,
        healthPath: '/health',
      },
      settings,
    );
    // Management calls with the token and real queries reached the handlers.
    expect(stats.byOperation['POST /graphql']?.['2xx']).toBeGreaterThan(0);
    expect(stats.byOperation['GET /queue']?.['2xx']).toBeGreaterThan(0);
  },
  settings.timeoutMs,
);
