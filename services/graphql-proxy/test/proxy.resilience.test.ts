import { existsSync } from 'node:fs';
import { readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, getJson, gql, postTitles } from './support/client.js';
import {
  BLOG_TOKEN,
  type Blog,
  type ProxyProcess,
  startBlog,
  startProxy,
  tempDir,
} from './support/processes.js';
import { type Relay, startRelay } from './support/relay.js';

/** These proxies' UPSTREAM_TIMEOUT_MS: a hanging upstream counts as offline after it. */
const HANG_TIMEOUT_MS = '1500';

// Corrupt files, lost answers and a hanging upstream, with the real blog behind a relay.
let dir: Awaited<ReturnType<typeof tempDir>>;
let blog: Blog;
let relay: Relay;
let diskProxy: ProxyProcess;
let setProxy: ProxyProcess;

beforeAll(async () => {
  dir = await tempDir('proxy-resilience');
  blog = await startBlog(path.join(dir.path, 'blog'));
  relay = await startRelay(blog.graphqlUrl);
  [diskProxy, setProxy] = await Promise.all([
    // No bodies in memory and no freshness: every hit reads its file, every query asks upstream first.
    startProxy(path.join(dir.path, 'disk'), {
      UPSTREAM_GRAPHQL_ENDPOINT: relay.url,
      CACHE_MEMORY_BYTES: '0',
      CACHE_TTL_SECONDS: '0',
      CACHE_STALE_WHILE_REVALIDATE_SECONDS: '0',
      UPSTREAM_TIMEOUT_MS: HANG_TIMEOUT_MS,
    }),
    startProxy(path.join(dir.path, 'set'), {
      UPSTREAM_GRAPHQL_ENDPOINT: relay.url,
      AUTH_TOKEN: BLOG_TOKEN,
      GRAPHQL_MODE: 'SETMODE',
      LOCAL_SYNC_ON_START: 'false',
      UPSTREAM_TIMEOUT_MS: HANG_TIMEOUT_MS,
    }),
  ]);
});

afterAll(async () => {
  await Promise.all([diskProxy?.close(), setProxy?.close()]);
  await relay?.close();
  await blog?.close();
  await dir?.remove();
});

/** After a hang the circuit breaker stays open until a probe gets an answer. */
async function breakerClosed(proxy: ProxyProcess): Promise<void> {
  await eventually(
    'the circuit breaker to close',
    async () => {
      const { body } = await getJson(`${proxy.url}/health`);
      return body['breaker'] === 'closed' ? true : undefined;
    },
    5000,
  );
}

const cacheDir = () => path.join(dir.path, 'disk/data/graphql-proxy/cache');

describe('a hanging upstream', () => {
  it('counts as offline after UPSTREAM_TIMEOUT_MS and serves the stale entry with a header', async () => {
    const query = '{ users { nodes { id name } } }';
    const warm = await gql(diskProxy.url, query);
    expect(warm.headers.get('x-cache')).toBe('MISS');
    relay.hang(true);
    try {
      const stale = await gql(diskProxy.url, query);
      expect(stale.headers.get('x-cache')).toBe('HIT');
      expect(stale.headers.get('x-cache-stale')).toBe('true');
      expect(stale.headers.get('age')).toMatch(/^\d+$/);
      expect(stale.body).toEqual(warm.body);
      const health = await getJson(`${diskProxy.url}/health`);
      expect(health.body['upstreamState']).toBe('offline');
      // GETMODE blocks a mutation offline exactly as online, without waiting for the upstream.
      const blocked = await gql(diskProxy.url, 'mutation { deleteTag(input: { id: "6" }) { deletedId } }');
      expect(blocked.body.errors?.[0]?.extensions?.['code']).toBe('MUTATIONS_DISABLED');
    } finally {
      relay.hang(false);
    }
  });
});

describe('corrupt cache files', () => {
  it('treats a corrupt file as a miss while running and at start, and never crashes', async () => {
    const query = '{ categories { nodes { id slug } } }';
    await breakerClosed(diskProxy);
    const first = await gql(diskProxy.url, query);
    const key = first.headers.get('x-cache-key') ?? '';
    // The file is written just after the answer; corrupt it only once it is there.
    await eventually('the cache file', async () =>
      existsSync(path.join(cacheDir(), `${key}.json`)) ? true : undefined,
    );
    await writeFile(path.join(cacheDir(), `${key}.json`), '{"key": "truncated');
    relay.hang(true);
    try {
      // Upstream hangs, the only copy is corrupt: an offline miss, not a crash or garbage.
      const miss = await gql(diskProxy.url, query);
      expect(miss.body.errors?.[0]?.extensions?.['code']).toBe('OFFLINE_CACHE_MISS');
    } finally {
      relay.hang(false);
    }
    await breakerClosed(diskProxy);
    await gql(diskProxy.url, query);
    await diskProxy.stop();
    await writeFile(path.join(cacheDir(), `${key}.json`), 'not json at all');
    await writeFile(path.join(cacheDir(), 'leftover.123.tmp'), '{');
    await diskProxy.start();
    const files = await readdir(cacheDir());
    expect(files).not.toContain(`${key}.json`);
    expect(files.some((name) => name.endsWith('.tmp'))).toBe(false);
    const again = await gql(diskProxy.url, query);
    expect(again.headers.get('x-cache')).toBe('MISS');
    expect(again.body).toEqual(first.body);
  });
});

describe('a lost answer', () => {
  it('queues the mutation; the replay finds it applied under its idempotency key and does not send it again', async () => {
    const before = relay.bodies.length;
    // Only this mutation's answer: a proxy's background probe may reach the relay meanwhile.
    relay.dropAnswers(1, '"title":"Answer lost on the way back"');
    const answer = await gql(
      setProxy.url,
      'mutation Lost($input: CreatePostInput!) { createPost(input: $input) { post { id title } } }',
      { input: { title: 'Answer lost on the way back' } },
    );
    expect(answer.body.extensions?.['queued']).toBe(true);
    await eventually('the queue to drain', async () => {
      const { body } = await getJson<{ mutations: unknown[] }>(`${setProxy.url}/queue`);
      return body.mutations.length === 0 ? true : undefined;
    });
    // (the question about the key names the mutation too, its variables as escaped JSON text)
    const sent = relay.bodies
      .slice(before)
      .filter((body) => body.includes('"title":"Answer lost on the way back"'));
    expect(sent.length).toBe(1);
    expect(relay.bodies.slice(before).some((body) => body.includes('ProxyIdempotencyKey'))).toBe(true);
    const posts = await gql(blog.url, '{ posts(first: 100) { nodes { title } } }');
    const titles = postTitles(posts);
    expect(titles.filter((title) => title === 'Answer lost on the way back')).toHaveLength(1);
  });
});
