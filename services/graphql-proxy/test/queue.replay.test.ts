import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, getJson, gql, postTitles } from './support/client.js';
import { BLOG_TOKEN, type Blog, type ProxyProcess } from './support/processes.js';
import { type QueueProxy, startQueueProxy } from './support/queue-proxy.js';
import type { Relay } from './support/relay.js';

// A SETMODE proxy without AUTH_TOKEN: a queued mutation is replayed with its caller's Authorization.
let setup: QueueProxy;
let blog: Blog;
let relay: Relay;
let proxy: ProxyProcess;

beforeAll(async () => {
  const started = await startQueueProxy('proxy-replay', {
    relay: true,
    env: { PROBE_INTERVAL_MS: '200', RETRY_BASE_MS: '500', RETRY_MAX_MS: '8000' },
  });
  setup = started;
  ({ blog, relay, proxy } = started);
});

afterAll(() => setup?.close());

const CREATE =
  'mutation Create($input: CreatePostInput!) { createPost(input: $input) { post { id title } } }';

/**
 * What only a send of the mutation titled `title` holds: the question about its key names the
 * mutation too (issue 41), its variables as JSON text, where the quotes are escaped.
 */
const sending = (title: string) => `"title":"${title}"`;

describe('replay of a queued mutation', () => {
  it("carries the caller's stored Authorization (the proxy has no token of its own)", async () => {
    const title = 'Replayed as its author';
    relay.dropAnswers(1, sending(title));
    const answer = await gql(
      proxy.url,
      CREATE,
      { input: { title } },
      { authorization: `Bearer ${BLOG_TOKEN}` },
    );
    expect(answer.body.extensions?.['queued']).toBe(true);
    await eventually('the queue to drain', async () => {
      const { body } = await getJson<{ mutations: unknown[] }>(`${proxy.url}/queue`);
      return body.mutations.length === 0 ? true : undefined;
    });
    // The caller's attempt (executed, its answer lost), then the replay's question about its key
    // (applied: its stored answer is taken, nothing sent again), both with the caller's Authorization.
    const sent = relay.requests.filter(
      (request) => request.body.includes(title) || request.body.includes('ProxyIdempotencyKey'),
    );
    expect(sent.map((request) => request.authorization)).toEqual([
      `Bearer ${BLOG_TOKEN}`,
      `Bearer ${BLOG_TOKEN}`,
    ]);
    expect(sent.filter((request) => request.body.includes(sending(title)))).toHaveLength(1);
    const titles = postTitles(await gql(blog.url, '{ posts(first: 100) { nodes { title } } }'));
    expect(titles.filter((t) => t === title)).toHaveLength(1);
  });
});

describe('a mutation arriving while another waits in the queue (upstream online)', () => {
  it('is queued behind it and reaches the upstream after it', async () => {
    const first = 'Waiting at the head';
    const second = 'Arrived while online';
    relay.dropAnswers(1, sending(first));
    // The first one's replay (its question about its key: its answer was lost) is held at the relay:
    // the upstream is online, the queue not empty.
    const held = relay.hold('ProxyIdempotencyKey');
    const from = relay.requests.length;
    const queued = await gql(
      proxy.url,
      CREATE,
      { input: { title: first } },
      { authorization: `Bearer ${BLOG_TOKEN}` },
    );
    expect(queued.body.extensions?.['queued']).toBe(true);
    await eventually('the replay to reach the relay', async () =>
      relay.requests.slice(from).some((request) => request.body.includes('ProxyIdempotencyKey'))
        ? true
        : undefined,
    );
    expect((await getJson<{ upstreamState: string }>(`${proxy.url}/health`)).body.upstreamState).toBe(
      'online',
    );
    const behind = await gql(
      proxy.url,
      CREATE,
      { input: { title: second } },
      { authorization: `Bearer ${BLOG_TOKEN}` },
    );
    expect(behind.body.extensions?.['queued']).toBe(true);
    expect(relay.requests.some((request) => request.body.includes(second))).toBe(false);
    held.release();
    await eventually('the queue to drain', async () => {
      const { body } = await getJson<{ mutations: unknown[] }>(`${proxy.url}/queue`);
      return body.mutations.length === 0 ? true : undefined;
    });
    const posts = await gql(blog.url, '{ posts(first: 100) { nodes { title databaseId } } }');
    const nodes = (posts.body.data as { posts: { nodes: { title: string; databaseId: number }[] } }).posts
      .nodes;
    const a = nodes.filter((node) => node.title === first);
    const b = nodes.filter((node) => node.title === second);
    expect([a.length, b.length]).toEqual([1, 1]);
    expect(a[0]!.databaseId).toBeLessThan(b[0]!.databaseId);
  });
});

describe('replay backoff', () => {
  // The caller's attempt fails and marks the upstream offline; the next probe brings it back online.
  // Coming back online must not replay a head whose own replay failed before its backoff is over
  // (before the fix the gaps were ~PROBE_INTERVAL_MS, 165-209 ms, never 500, 1000 and 2000 ms).
  it('waits RETRY_BASE_MS, doubling, between failed attempts of one mutation', async () => {
    const title = 'Backed off';
    // The caller's attempt and three replays never reach the blog; the fourth replay gets through.
    // (Each replay first asks about the key: not applied, so it is sent.)
    relay.dropRequests(4, sending(title));
    const answer = await gql(
      proxy.url,
      CREATE,
      { input: { title } },
      { authorization: `Bearer ${BLOG_TOKEN}` },
    );
    expect(answer.body.extensions?.['queued']).toBe(true);
    await eventually(
      'the queue to drain',
      async () => {
        const { body } = await getJson<{ mutations: unknown[] }>(`${proxy.url}/queue`);
        return body.mutations.length === 0 ? true : undefined;
      },
      20_000,
    );
    const at = relay.requests.filter((request) => request.body.includes(sending(title))).map((r) => r.at);
    const gaps = at.slice(1).map((t, i) => t - at[i]!);
    expect(gaps).toHaveLength(4);
    expect(gaps[1]).toBeGreaterThanOrEqual(500);
    expect(gaps[2]).toBeGreaterThanOrEqual(1_000);
    expect(gaps[3]).toBeGreaterThanOrEqual(2_000);
  }, 30_000);
});

describe("a replay in doubt never takes another mutation's answer (issue 41)", () => {
  it('is rejected with IDEMPOTENCY_KEY_REUSED when its key holds another mutation upstream', async () => {
    const auth = { authorization: `Bearer ${BLOG_TOKEN}` };
    const key = `shared-key-${Date.now()}`;
    // Another client's mutation under the key, applied by the blog.
    const original = await gql(
      blog.url,
      CREATE,
      { input: { title: 'Original under the key' } },
      {
        ...auth,
        'idempotency-key': key,
      },
    );
    expect(original.body.errors).toBeUndefined();
    // This one, under the same key through the proxy: the blog refuses it (422), the answer is lost,
    // so the proxy queues it in doubt and its replay asks the blog about the key.
    const title = 'Another under the key';
    relay.dropAnswers(1, sending(title));
    const queued = await gql(proxy.url, CREATE, { input: { title } }, { ...auth, 'idempotency-key': key });
    expect(queued.body.extensions?.['queued']).toBe(true);
    const id = queued.body.extensions?.['queueId'] as string;
    const settled = await eventually('the replay to decide', async () => {
      const { body } = await getJson<{
        status: string;
        errors?: Array<{ extensions?: { code?: string } }>;
        response?: unknown;
      }>(`${proxy.url}/queue/${id}`);
      return body.status === 'pending' ? undefined : body;
    });
    // Before the fix: `sent`, `recovered: true`, with the original's answer as this one's.
    expect(settled.status).toBe('rejected');
    expect(settled.errors?.[0]?.extensions?.code).toBe('IDEMPOTENCY_KEY_REUSED');
    expect(JSON.stringify(settled)).not.toContain('Original under the key');
    // Sent once (the caller's attempt), never again.
    expect(relay.requests.filter((request) => request.body.includes(sending(title)))).toHaveLength(1);
    const titles = postTitles(await gql(blog.url, '{ posts(first: 100) { nodes { title } } }'));
    expect(titles.filter((t) => t === title)).toHaveLength(0);
    // An operator discards it; the queue is free again.
    expect((await fetch(`${proxy.url}/queue/${id}`, { method: 'DELETE' })).status).toBe(200);
  });
});
