import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { eventually, getJson, gql, postTitles } from './support/client.js';
import {
  BLOG_TOKEN,
  type Blog,
  type ProxyProcess,
  startBlog,
  startProxy,
  tempDir,
} from './support/processes.js';

// The upstream goes away and comes back in these tests. Each case starts from the same state (the
// blog up, both proxies online, the queue empty: see beforeEach) and uses titles of its own, so a
// single case runs alone with `-t`.
let dir: Awaited<ReturnType<typeof tempDir>>;
let blog: Blog;
let setProxy: ProxyProcess;
let crudProxy: ProxyProcess;

interface QueueBody {
  mutations: Array<{
    id: string;
    attempts: number;
    createdAt: string;
    status: string;
    payload: { query: string };
    lastError: null | { message: string; code?: string };
  }>;
}
interface LocalBody {
  data: Record<string, Array<Record<string, unknown>>> & { lastUpdated: string | null };
}

const POSTS = '{ posts(first: 100) { nodes { id title } } }';
const CREATE =
  'mutation Create($input: CreatePostInput!) { createPost(input: $input) { post { id title } } }';

async function blogTitles(): Promise<string[]> {
  return postTitles(await gql(blog.url, POSTS));
}

async function upstreamState(proxy: ProxyProcess, state: 'online' | 'offline'): Promise<void> {
  await eventually(`the proxy to see the upstream ${state}`, async () => {
    const { body } = await getJson<{ upstreamState: string }>(`${proxy.url}/health`);
    return body.upstreamState === state ? true : undefined;
  });
}

/** Stops the blog (a proxy online does not probe: it finds out with its next upstream call). */
async function upstreamDown(): Promise<void> {
  await blog.stop();
}

/** Posts of the blog, drafts included (the proxies sync with AUTH_TOKEN). */
async function blogPostCount(): Promise<number> {
  const answer = await gql(blog.url, POSTS, undefined, { authorization: `Bearer ${BLOG_TOKEN}` });
  return postTitles(answer).length;
}

async function queue(proxy: ProxyProcess): Promise<QueueBody['mutations']> {
  return (await getJson<QueueBody>(`${proxy.url}/queue`)).body.mutations;
}

beforeAll(async () => {
  dir = await tempDir('proxy-offline');
  blog = await startBlog(path.join(dir.path, 'blog'));
  [setProxy, crudProxy] = await Promise.all([
    startProxy(path.join(dir.path, 'set'), {
      UPSTREAM_GRAPHQL_ENDPOINT: blog.graphqlUrl,
      AUTH_TOKEN: BLOG_TOKEN,
      GRAPHQL_MODE: 'SETMODE',
    }),
    startProxy(path.join(dir.path, 'crud'), {
      UPSTREAM_GRAPHQL_ENDPOINT: blog.graphqlUrl,
      AUTH_TOKEN: BLOG_TOKEN,
      GRAPHQL_MODE: 'CRUDMODE',
    }),
  ]);
});

beforeEach(async () => {
  await blog.start();
  await Promise.all([upstreamState(setProxy, 'online'), upstreamState(crudProxy, 'online')]);
  await eventually('the queue to be empty', async () =>
    (await queue(setProxy)).length === 0 ? true : undefined,
  );
});

afterAll(async () => {
  await Promise.all([setProxy?.close(), crudProxy?.close()]);
  await blog?.close();
  await dir?.remove();
});

describe('offline and back', () => {
  it('syncs the local database from the upstream at start in SETMODE', async () => {
    const health = await eventually('a first local sync', async () => {
      const { body } = await getJson<{ localData: { posts: number; lastUpdated: string | null } }>(
        `${setProxy.url}/health`,
      );
      return body.localData.lastUpdated ? body : undefined;
    });
    const posts = await blogPostCount();
    expect(posts).toBeGreaterThan(0);
    expect(health.localData.posts).toBe(posts);
    const { body } = await getJson<LocalBody>(`${setProxy.url}/local/data`);
    expect(body.data.posts?.length).toBe(posts);
    expect(body.data.categories?.length).toBe(3);
    expect(body.data.authors?.length).toBe(2);
  });

  it('serves cached queries (marked stale) and reports a miss for others while the upstream is down', async () => {
    const warm = await gql(setProxy.url, POSTS);
    expect(warm.body.data).toBeTruthy();
    await upstreamDown();
    const cached = await gql(setProxy.url, POSTS);
    expect(cached.status).toBe(200);
    expect(cached.headers.get('x-cache')).toBe('HIT');
    expect(cached.body).toEqual(warm.body);
    // Issue 32: an anonymous query is now answered from the local copy of the blog's data
    // (x-cache: LOCAL); a caller with credentials, whom the local copy cannot serve, still gets the miss.
    const local = await gql(setProxy.url, '{ pages { nodes { id title } } }');
    expect(local.headers.get('x-cache')).toBe('LOCAL');
    const uncached = await gql(setProxy.url, '{ pages { nodes { id title } } }', undefined, {
      authorization: `Bearer ${BLOG_TOKEN}`,
    });
    expect(uncached.status).toBe(200);
    expect(uncached.body.errors?.[0]).toEqual({
      message: 'Upstream GraphQL is unavailable and cache miss occurred for this query.',
      extensions: { code: 'OFFLINE_CACHE_MISS', cacheKey: uncached.headers.get('x-cache-key') },
    });
    const health = await getJson(`${setProxy.url}/health`);
    expect(health.body['upstreamState']).toBe('offline');
  });

  it('fails a mutation in CRUDMODE while offline', async () => {
    await upstreamDown();
    const answer = await gql(crudProxy.url, CREATE, { input: { title: 'Never written' } });
    expect(answer.body.errors?.[0]?.extensions?.['code']).toBe('UPSTREAM_UNAVAILABLE');
  });

  it('queues mutations in SETMODE while offline and shows them as pending local data', async () => {
    await upstreamDown();
    const first = await gql(setProxy.url, CREATE, { input: { title: 'Shown as pending' } });
    expect(first.body.errors).toBeUndefined();
    expect(first.body.extensions).toMatchObject({
      queued: true,
      queueId: expect.any(String),
      message: expect.any(String),
    });
    const second = await gql(
      setProxy.url,
      'mutation { createTag(input: { name: "pending-tag" }) { tag { id } } }',
    );
    expect(second.body.extensions?.['queued']).toBe(true);
    const items = await queue(setProxy);
    expect(items.map((item) => item.id)).toEqual([
      first.body.extensions?.['queueId'],
      second.body.extensions?.['queueId'],
    ]);
    expect(items[0]?.payload.query).toBe(CREATE);
    const local = (await getJson<LocalBody>(`${setProxy.url}/local/data`)).body.data;
    const pending = local.posts?.find((post) => post['title'] === 'Shown as pending');
    expect(pending).toMatchObject({ pending: true, queueId: items[0]?.id });
    expect(local.tags?.find((tag) => tag['name'] === 'pending-tag')).toMatchObject({ pending: true });
  });

  it('keeps the queue across a restart of the proxy', async () => {
    await upstreamDown();
    for (const title of ['Kept across a restart', 'Kept behind it']) {
      const queued = await gql(setProxy.url, CREATE, { input: { title } });
      expect(queued.body.extensions?.['queued']).toBe(true);
    }
    const stable = (items: QueueBody['mutations']) =>
      items.map(({ id, createdAt, status, payload }) => ({ id, createdAt, status, payload }));
    const before = stable(await queue(setProxy));
    await setProxy.stop();
    await setProxy.start();
    expect(stable(await queue(setProxy))).toEqual(before);
    expect(before).toHaveLength(2);
    const file = JSON.parse(
      await readFile(path.join(dir.path, 'set/data/graphql-proxy/local-db.json'), 'utf8'),
    ) as LocalBody;
    expect(file.data.posts?.filter((post) => post['pending'] === true).map((post) => post['title'])).toEqual([
      'Kept across a restart',
      'Kept behind it',
    ]);
  });

  it('replays the queue in order when the upstream returns, once, and confirms the local data', async () => {
    // The list is cached before the outage: the replayed mutation must invalidate it.
    expect((await gql(setProxy.url, POSTS)).body.data).toBeTruthy();
    expect((await gql(setProxy.url, POSTS)).headers.get('x-cache')).toBe('HIT');
    await upstreamDown();
    const post = await gql(setProxy.url, CREATE, { input: { title: 'Written offline' } });
    const tag = await gql(
      setProxy.url,
      'mutation { createTag(input: { name: "queued-tag" }) { tag { id } } }',
    );
    expect([post.body.extensions?.['queued'], tag.body.extensions?.['queued']]).toEqual([true, true]);
    await blog.start();
    await eventually('the queue to drain', async () =>
      (await queue(setProxy)).length === 0 ? true : undefined,
    );
    const titles = await blogTitles();
    expect(titles.filter((title) => title === 'Written offline')).toHaveLength(1);
    // The blog numbers posts and tags from one sequence: the post, queued first, was created first.
    const listed = await gql(
      blog.url,
      '{ posts(first: 100) { nodes { title databaseId } } tags(first: 100) { nodes { name databaseId } } }',
    );
    const data = listed.body.data as {
      posts: { nodes: { title: string; databaseId: number }[] };
      tags: { nodes: { name: string; databaseId: number }[] };
    };
    const created = {
      post: data.posts.nodes.find((node) => node.title === 'Written offline'),
      tag: data.tags.nodes.find((node) => node.name === 'queued-tag'),
    };
    expect(created.post && created.tag && created.post.databaseId < created.tag.databaseId).toBe(true);
    const local = await eventually('local data to be confirmed', async () => {
      const data = (await getJson<LocalBody>(`${setProxy.url}/local/data`)).body.data;
      const post = data.posts?.find((item) => item['title'] === 'Written offline');
      return post && post['pending'] === undefined ? data : undefined;
    });
    expect(local.posts?.length).toBe(await blogPostCount());
    // The cached list was invalidated by the replayed mutation.
    const fresh = await gql(setProxy.url, POSTS);
    expect(fresh.headers.get('x-cache')).toBe('MISS');
    expect(JSON.stringify(fresh.body)).toContain('Written offline');
  });

  it('executes a SETMODE mutation online at once', async () => {
    const answer = await gql(setProxy.url, CREATE, { input: { title: 'Written online' } });
    expect(answer.body.extensions).toBeUndefined();
    expect(answer.body.data).toMatchObject({ createPost: { post: { title: 'Written online' } } });
  });

  it('stops the replay at a mutation the upstream rejects until it is discarded', async () => {
    await upstreamDown();
    const bad = await gql(
      setProxy.url,
      'mutation { updatePost(input: { id: "999999", title: "x" }) { post { id } } }',
    );
    const good = await gql(setProxy.url, CREATE, { input: { title: 'Behind the rejected one' } });
    expect(bad.body.extensions?.['queued']).toBe(true);
    expect(good.body.extensions?.['queued']).toBe(true);
    await blog.start();
    const rejected = await eventually('the head to be rejected', async () => {
      const items = await queue(setProxy);
      return items[0]?.status === 'rejected' ? items : undefined;
    });
    expect(rejected).toHaveLength(2);
    expect(rejected[0]?.lastError).toMatchObject({ code: 'NOT_FOUND' });
    expect(rejected[1]?.status).toBe('pending');
    const flush = await getJson<{ flushed: number; stoppedBy: { reason: string } }>(`${setProxy.url}/flush`, {
      method: 'POST',
    });
    expect(flush.body).toMatchObject({ flushed: 0, stoppedBy: { reason: 'rejected' } });
    expect(await blogTitles()).not.toContain('Behind the rejected one');

    const retried = await getJson<{ retried: string; flushed: number }>(
      `${setProxy.url}/queue/${rejected[0]?.id}/retry`,
      {
        method: 'POST',
      },
    );
    expect(retried.body).toMatchObject({ retried: rejected[0]?.id, flushed: 0 });
    const afterRetry = await queue(setProxy);
    expect(afterRetry[0]).toMatchObject({
      id: rejected[0]?.id,
      status: 'rejected',
      attempts: (rejected[0]?.attempts ?? 0) + 1,
    });
    const notRejected = await fetch(`${setProxy.url}/queue/${rejected[1]?.id}/retry`, { method: 'POST' });
    expect(notRejected.status).toBe(409);

    const discarded = await fetch(`${setProxy.url}/queue/${rejected[0]?.id}`, { method: 'DELETE' });
    expect(discarded.status).toBe(200);
    await eventually('the queue to drain', async () =>
      (await queue(setProxy)).length === 0 ? true : undefined,
    );
    expect((await blogTitles()).filter((title) => title === 'Behind the rejected one')).toHaveLength(1);
    const missing = await fetch(`${setProxy.url}/queue/${rejected[0]?.id}`, { method: 'DELETE' });
    expect(missing.status).toBe(404);
    expect(await missing.json()).toMatchObject({ statusCode: 404, error: 'Not Found' });
  });

  it('keeps the local data when a sync fails', async () => {
    await upstreamDown();
    const before = (await getJson<LocalBody>(`${setProxy.url}/local/data`)).body.data;
    const sync = await fetch(`${setProxy.url}/local/sync`, { method: 'POST' });
    expect(sync.status).toBe(503);
    const after = (await getJson<LocalBody>(`${setProxy.url}/local/data`)).body.data;
    expect(after).toEqual(before);
    expect(after.posts?.length).toBeGreaterThan(0);
    await blog.start();
    const synced = await getJson<{ counts: { posts: number } }>(`${setProxy.url}/local/sync`, {
      method: 'POST',
    });
    expect(synced.status).toBe(200);
    expect(synced.body.counts.posts).toBe(await blogPostCount());
  });
});
