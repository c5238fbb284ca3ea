import path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { eventually, getJson, gql } from './support/client.js';
import { type Blog, type ProxyProcess, startBlog, startProxy, tempDir } from './support/processes.js';
import { type Relay, startRelay } from './support/relay.js';

// A hanging upstream: only the probe may wait on it; cached answers are served at once, misses fail fast.
// Each case starts with the upstream answering and the breaker closed, so it runs alone with `-t`.
let dir: Awaited<ReturnType<typeof tempDir>>;
let blog: Blog;
let relay: Relay;
let proxy: ProxyProcess;
// UPSTREAM_TIMEOUT_MS. An answer that waited on the hanging upstream takes at least this long, so
// "at once" is asserted as below it (a bound with a meaning, not a speed figure: the relay and the
// upstream-call counts are what prove nothing waited).
const TIMEOUT_MS = 1500;

beforeAll(async () => {
  dir = await tempDir('proxy-breaker');
  blog = await startBlog(path.join(dir.path, 'blog'));
  relay = await startRelay(blog.graphqlUrl);
  proxy = await startProxy(path.join(dir.path, 'proxy'), {
    UPSTREAM_GRAPHQL_ENDPOINT: relay.url,
    UPSTREAM_TIMEOUT_MS: String(TIMEOUT_MS),
    // A lifetime of 0: an entry is stale as soon as it is stored (and served within the window
    // below), so a case needs no wait on the cache's clock to have one.
    CACHE_TTL_SECONDS: '0',
    CACHE_STALE_WHILE_REVALIDATE_SECONDS: '3600',
  });
});

afterAll(async () => {
  relay?.hang(false);
  await proxy?.close();
  await relay?.close();
  await blog?.close();
  await dir?.remove();
});

async function timed<T>(work: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const started = Date.now();
  const value = await work();
  return { ms: Date.now() - started, value };
}

const LIST = '{ tags(first: 3) { nodes { id name } } }';
const OTHER = '{ categories(first: 2) { nodes { id name } } }';

async function breaker(state: 'open' | 'closed', timeoutMs = TIMEOUT_MS * 4): Promise<void> {
  await eventually(
    `the breaker to be ${state}`,
    async () => {
      const { body } = await getJson<{ breaker: string }>(`${proxy.url}/health`);
      return body.breaker === state ? true : undefined;
    },
    timeoutMs,
  );
}

/** Caches `query`; with CACHE_TTL_SECONDS=0 its entry is stale (served while revalidated) at once. */
async function cachedAndStale(query: string): Promise<Awaited<ReturnType<typeof gql>>> {
  const warm = await gql(proxy.url, query);
  expect(warm.body.data).toBeTruthy();
  return warm;
}

/** Makes the upstream hang and waits for a miss to time out there, which opens the breaker. */
async function hangAndOpen(): Promise<void> {
  relay.hang(true);
  const miss = await gql(proxy.url, '{ posts(first: 19) { nodes { id } } }');
  expect(miss.body.errors?.[0]?.extensions?.['code']).toBe('OFFLINE_CACHE_MISS');
  await breaker('open');
}

beforeEach(async () => {
  relay.hang(false);
  await breaker('closed');
});

afterEach(() => {
  relay.hang(false);
});

describe('stale-while-revalidate', () => {
  it('answers a stale entry from the cache at once and refreshes it in the background', async () => {
    const warm = await cachedAndStale(LIST);
    expect(warm.headers.get('x-cache')).toBe('MISS');
    const sentBefore = relay.bodies.filter((body) => body.includes('tags(first: 3)')).length;
    relay.hang(true);
    const stale = await timed(() => gql(proxy.url, LIST));
    expect(stale.ms).toBeLessThan(TIMEOUT_MS);
    expect(stale.value.headers.get('x-cache')).toBe('HIT');
    expect(stale.value.headers.get('x-cache-stale')).toBe('true');
    expect(stale.value.body).toEqual(warm.body);
    // The refresh went upstream (and hangs there) without holding up the answer.
    await eventually('the background refresh', async () =>
      relay.bodies.filter((body) => body.includes('tags(first: 3)')).length > sentBefore ? true : undefined,
    );
  });
});

describe('circuit breaker', () => {
  it('opens when the upstream hangs: stale entries and misses answer at once while only the probe waits', async () => {
    await cachedAndStale(OTHER);
    await hangAndOpen();
    const sent = relay.bodies.length;
    const misses = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        timed(() => gql(proxy.url, `{ posts(first: ${i + 20}) { nodes { id } } }`)),
      ),
    );
    for (const miss of misses) {
      expect(miss.ms).toBeLessThan(TIMEOUT_MS);
      expect(miss.value.body.errors?.[0]?.extensions?.['code']).toBe('OFFLINE_CACHE_MISS');
    }
    const stale = await timed(() => gql(proxy.url, OTHER));
    expect(stale.ms).toBeLessThan(TIMEOUT_MS);
    expect(stale.value.headers.get('x-cache-stale')).toBe('true');
    // None of those requests reached the upstream (probes may have).
    expect(relay.bodies.slice(sent).filter((body) => !body.includes('ProxyProbe'))).toEqual([]);
  });

  it('closes again when a probe gets an answer', async () => {
    await hangAndOpen();
    relay.hang(false);
    await breaker('closed');
    const answer = await gql(proxy.url, '{ posts(first: 21) { nodes { id } } }');
    expect(answer.body.data).toBeTruthy();
  });
});
