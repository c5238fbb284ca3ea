import path from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp, type ProxyApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { getJson, gql } from './support/client.js';
import { tempDir } from './support/processes.js';

// The original's client contract (issue 19), in SETMODE in front of an upstream that is not there.
let dir: Awaited<ReturnType<typeof tempDir>>;
let app: ProxyApp;
let url: string;

beforeAll(async () => {
  dir = await tempDir('proxy-contract');
  const config = loadConfig(
    {
      UPSTREAM_GRAPHQL_ENDPOINT: 'http://127.0.0.1:9/graphql',
      GRAPHQL_MODE: 'SETMODE',
      AUTH_TOKEN: 'secret-upstream-token',
      LOCAL_SYNC_ON_START: 'false',
      PATHS_BASE_DIR: dir.path,
      PROBE_INTERVAL_MS: '60000',
    },
    dir.path,
  );
  app = await buildApp(config, pino({ level: 'silent' }));
  url = await app.fastify.listen({ port: 0, host: '127.0.0.1' });
});

afterAll(async () => {
  await app?.close();
  await dir?.remove();
});

describe("the original's client contract", () => {
  it('sends x-mode, x-cache, x-cache-key on queries and x-mutation, x-queue-id on a queued mutation', async () => {
    const query = await gql(url, '{ posts { nodes { id } } }');
    expect(query.headers.get('x-mode')).toBe('SETMODE');
    expect(query.headers.get('x-cache')).toBe('MISS');
    expect(query.headers.get('x-cache-key')).toMatch(/^[0-9a-f]{64}$/);
    const queued = await gql(url, 'mutation { createTag(input: { name: "t" }) { tag { id } } }');
    expect(queued.headers.get('x-mode')).toBe('SETMODE');
    expect(queued.headers.get('x-mutation')).toBe('queued');
    expect(queued.headers.get('x-queue-id')).toBe(String(queued.body.extensions?.['queueId']));
    expect(queued.headers.get('access-control-expose-headers')).toMatch(/x-queue-id/);
  });

  it('answers /health with the original fields, authToken as a boolean and never the token', async () => {
    const response = await fetch(`${url}/health`);
    const text = await response.text();
    expect(text).not.toContain('secret-upstream-token');
    const body = JSON.parse(text) as Record<string, unknown>;
    expect(body).toMatchObject({
      ok: true,
      port: expect.any(Number),
      mode: 'SETMODE',
      upstream: 'configured',
      authToken: true,
      cacheDir: path.join(dir.path, 'data/graphql-proxy/cache'),
      queueDir: path.join(dir.path, 'data/graphql-proxy/queue'),
      localDbPath: path.join(dir.path, 'data/graphql-proxy/local-db.json'),
      queuedMutations: 1,
      localData: { posts: expect.any(Number), lastUpdated: null },
    });
  });

  it('answers /flush with {message, flushed, failed} and /local/sync with {message, counts}', async () => {
    const flush = await getJson(`${url}/flush`, { method: 'POST' });
    expect(flush.body).toMatchObject({ message: expect.any(String), flushed: 0, failed: 1, remaining: 1 });
    const sync = await getJson(`${url}/local/sync`, { method: 'POST' });
    expect(sync.status).toBe(503);
    expect(sync.body).toMatchObject({ statusCode: 503, message: expect.any(String) });
  });
});
