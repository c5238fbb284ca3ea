import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, getJson, gql } from './support/client.js';
import { type Blog, type ProxyProcess, startBlog, startProxy, tempDir } from './support/processes.js';
import { type Relay, startRelay } from './support/relay.js';

// A hanging upstream: only the probe may wait on it; cached answers are served at once, misses fail fast.
let dir: Awaited<ReturnType<typeof tempDir>>;
let blog: Blog;
let relay: Relay;
let proxy: ProxyProcess;
const TIMEOUT_MS = 1500;

beforeAll(async () => {
  dir = await tempDir('proxy-breaker');
  blog = await startBlog(path.join(dir.path, 'blog'));
  relay = await startRelay(blog.graphqlUrl);
  proxy = await startProxy(path.join(dir.path, 'proxy'), {
    UPSTREAM_GRAPHQL_ENDPOINT: relay.url,
    UPSTREAM_TIMEOUT_MS: String(TIMEOUT_MS),
    CACHE_TTL_SECONDS: '1',
    CACHE_STALE_WHILE_REVALIDATE_SECONDS: '3600',
  });
});

afterAll(async () => {
  relay?.hang(false);
  await proxy?.stop();
  await relay?.close();
  await blog?.stop();
  await dir?.remove();
});

async function timed<T>(work: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const started = Date.now();
  const value = await work();
  return { ms: Date.now() - started, value };
}

const LIST = '{ tags(first: 3) { nodes { id name } } }';
const OTHER = '{ categories(first: 2) { nodes { id name } } }';

describe('stale-while-revalidate', () => {
  it('answers a stale entry from the cache at once and refreshes it in the background', async () => {
    const warm = await gql(proxy.url, LIST);
    expect(warm.headers.get('x-cache')).toBe('MISS');
    await gql(proxy.url, OTHER);
    await new Promise((resolve) => setTimeout(resolve, 1100));
    const sentBefore = relay.bodies.filter((body) => body.includes('tags(first: 3)')).length;
    relay.hang(true);
    const stale = await timed(() => gql(proxy.url, LIST));
    expect(stale.ms).toBeLessThan(700);
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
    // Let the background refresh (or the probe) time out: the breaker opens.
    await eventually(
      'the breaker to open',
      async () => {
        const { body } = await getJson<{ breaker: string }>(`${proxy.url}/health`);
        return body.breaker === 'open' ? true : undefined;
      },
      TIMEOUT_MS * 3,
    );
    const sent = relay.bodies.length;
    const misses = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        timed(() => gql(proxy.url, `{ posts(first: ${i + 20}) { nodes { id } } }`)),
      ),
    );
    for (const miss of misses) {
      expect(miss.ms).toBeLessThan(700);
      expect(miss.value.body.errors?.[0]?.extensions?.['code']).toBe('OFFLINE_CACHE_MISS');
    }
    const stale = await timed(() => gql(proxy.url, OTHER));
    expect(stale.ms).toBeLessThan(700);
    expect(stale.value.headers.get('x-cache-stale')).toBe('true');
    // None of those requests reached the upstream (probes may have).
    expect(relay.bodies.slice(sent).filter((body) => !body.includes('ProxyProbe'))).toEqual([]);
  });

  it('closes again when a probe gets an answer', async () => {
    relay.hang(false);
    await eventually(
      'the breaker to close',
      async () => {
        const { body } = await getJson<{ breaker: string }>(`${proxy.url}/health`);
        return body.breaker === 'closed' ? true : undefined;
      },
      TIMEOUT_MS * 4,
    );
    const answer = await gql(proxy.url, '{ posts(first: 21) { nodes { id } } }');
    expect(answer.body.data).toBeTruthy();
  });
});
