import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, getJson, gql, postTitles } from './support/client.js';
import { BLOG_TOKEN, type Blog, type ProxyProcess } from './support/processes.js';
import { type QueueProxy, startQueueProxy } from './support/queue-proxy.js';

// Issue 19: a mutation the upstream rejected must not silently stall every later write.
let setup: QueueProxy;
let blog: Blog;
let proxy: ProxyProcess;

const CREATE =
  'mutation Create($input: CreatePostInput!) { createPost(input: $input) { post { id title } } }';
const BAD = 'mutation { updatePost(input: { id: "999999", title: "x" }) { post { id } } }';

interface QueueItem {
  id: string;
  status: string;
}

beforeAll(async () => {
  setup = await startQueueProxy('proxy-blocked', { env: { AUTH_TOKEN: BLOG_TOKEN } });
  ({ blog, proxy } = setup);
});

afterAll(() => setup?.close());

async function queue(): Promise<QueueItem[]> {
  return (await getJson<{ mutations: QueueItem[] }>(`${proxy.url}/queue`)).body.mutations;
}

describe('a rejected replay', () => {
  let badId = '';
  let behindId = '';
  let behindHeaders = new Headers();

  // Both cases start from the blocked queue: a rejected head (bad) and one pending behind it.
  beforeAll(async () => {
    await blog.stop();
    const bad = await gql(proxy.url, BAD);
    const behind = await gql(proxy.url, CREATE, { input: { title: 'Queued behind the bad one' } });
    badId = String(bad.body.extensions?.['queueId']);
    behindId = String(behind.body.extensions?.['queueId']);
    behindHeaders = behind.headers;
    await blog.start();
    await eventually('the head to be rejected', async () =>
      (await queue())[0]?.status === 'rejected' ? true : undefined,
    );
  });

  it('blocks the queue visibly: a new mutation is refused with QUEUE_BLOCKED, not queued as "unavailable"', async () => {
    expect(behindHeaders.get('x-queue-id')).toBe(behindId);
    expect(behindHeaders.get('x-mutation')).toBe('queued');
    const online = await gql(proxy.url, CREATE, { input: { title: 'Sent while blocked' } });
    expect(online.body.extensions?.['queued']).toBeUndefined();
    expect(online.body.errors?.[0]?.extensions).toMatchObject({ code: 'QUEUE_BLOCKED', blockedBy: badId });
    expect(online.body.errors?.[0]?.message).toMatch(/rejected/);
    expect(online.body.errors?.[0]?.message).not.toMatch(/unavailable/);
    expect((await queue()).map((item) => item.id)).toEqual([badId, behindId]);

    const health = await getJson<Record<string, unknown>>(`${proxy.url}/health`);
    expect(health.body).toMatchObject({
      queueState: 'blocked',
      blockedBy: { id: badId, code: 'NOT_FOUND' },
      queuedMutations: 2,
      rejectedMutations: 1,
    });
  });

  it('GET /queue/{id} tells each mutation its outcome: rejected with the errors, then discarded, then sent', async () => {
    const rejected = await getJson<Record<string, unknown>>(`${proxy.url}/queue/${badId}`);
    expect(rejected.status).toBe(200);
    expect(rejected.body).toMatchObject({
      id: badId,
      status: 'rejected',
      errors: [{ extensions: { code: 'NOT_FOUND' } }],
    });
    expect((await getJson(`${proxy.url}/queue/${behindId}`)).body).toMatchObject({ status: 'pending' });

    expect((await fetch(`${proxy.url}/queue/${badId}`, { method: 'DELETE' })).status).toBe(200);
    await eventually('the queue to drain', async () => ((await queue()).length === 0 ? true : undefined));
    expect((await getJson(`${proxy.url}/queue/${badId}`)).body).toMatchObject({
      id: badId,
      status: 'discarded',
    });
    const sent = await getJson<{
      status: string;
      response: { data: { createPost: { post: { title: string } } } };
    }>(`${proxy.url}/queue/${behindId}`);
    expect(sent.body.status).toBe('sent');
    expect(sent.body.response.data.createPost.post.title).toBe('Queued behind the bad one');
    expect((await getJson(`${proxy.url}/health`)).body).toMatchObject({ queueState: 'empty' });

    // Outcomes survive a restart.
    await proxy.stop();
    await proxy.start();
    expect((await getJson(`${proxy.url}/queue/${behindId}`)).body).toMatchObject({ status: 'sent' });
    expect((await getJson(`${proxy.url}/queue/not-a-known-id`)).status).toBe(404);

    const after = await gql(proxy.url, CREATE, { input: { title: 'Sent after the discard' } });
    expect(after.body.errors).toBeUndefined();
    expect(after.headers.get('x-mutation')).toBe('executed');
    const sync = await getJson<{ message: string; counts: { posts: number } }>(`${proxy.url}/local/sync`, {
      method: 'POST',
    });
    expect(sync.body).toMatchObject({ message: expect.any(String), counts: { posts: expect.any(Number) } });
    const titles = postTitles(await gql(blog.url, '{ posts(first: 100) { nodes { title } } }'));
    expect(titles.filter((title) => title === 'Queued behind the bad one')).toHaveLength(1);
    expect(titles).not.toContain('Sent while blocked');
  });
});
