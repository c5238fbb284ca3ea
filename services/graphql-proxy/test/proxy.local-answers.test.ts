import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getJson, gql } from './support/client.js';
import {
  BLOG_TOKEN,
  type Blog,
  type ProxyProcess,
  startBlog,
  startProxy,
  tempDir,
} from './support/processes.js';

// Offline answers beyond the cache: queries the cache never saw, answered from the local copy of the
// blog's data by the blog's own schema and resolvers, while the blog is down.
let dir: Awaited<ReturnType<typeof tempDir>>;
let blog: Blog;
let proxy: ProxyProcess;

beforeAll(async () => {
  dir = await tempDir('proxy-local-answers');
  blog = await startBlog(path.join(dir.path, 'blog'));
  proxy = await startProxy(path.join(dir.path, 'proxy'), {
    UPSTREAM_GRAPHQL_ENDPOINT: blog.graphqlUrl,
    AUTH_TOKEN: BLOG_TOKEN,
    GRAPHQL_MODE: 'GETMODE',
  });
}, 120_000);

afterAll(async () => {
  await proxy?.close();
  await blog?.close();
  await dir?.remove();
});

const POSTS =
  'query Recent($n: Int) { posts(first: $n) { nodes { id title slug author { node { name } } categories { nodes { name } } } pageInfo { hasNextPage } } }';
const CATEGORY = '{ categories { nodes { name count posts(first: 2) { nodes { title } } } } }';

describe('a query missing the cache while the upstream is offline', () => {
  it('is answered from the local copy (x-cache: LOCAL, age), like the blog answered it', async () => {
    const expectedPosts = await gql(blog.url, POSTS, { n: 3 });
    const expectedCategories = await gql(blog.url, CATEGORY);
    expect(expectedPosts.body.errors).toBeUndefined();
    const synced = await fetch(`${proxy.url}/local/sync`, { method: 'POST' });
    expect(synced.status).toBe(200);
    await blog.stop();

    const posts = await gql(proxy.url, POSTS, { n: 3 });
    expect(posts.headers.get('x-cache')).toBe('LOCAL');
    expect(Number(posts.headers.get('age'))).toBeGreaterThanOrEqual(0);
    expect(posts.body).toEqual(expectedPosts.body);
    const categories = await gql(proxy.url, CATEGORY);
    expect(categories.headers.get('x-cache')).toBe('LOCAL');
    expect(categories.body).toEqual(expectedCategories.body);
  });

  it('is OFFLINE_CACHE_MISS when the local copy cannot answer it, or the caller sent credentials', async () => {
    const unknownField = await gql(proxy.url, '{ posts { nodes { notAField } } }');
    expect(unknownField.body.errors?.[0]?.extensions?.['code']).toBe('OFFLINE_CACHE_MISS');
    const withCredentials = await gql(proxy.url, POSTS, { n: 1 }, { authorization: `Bearer ${BLOG_TOKEN}` });
    expect(withCredentials.headers.get('x-cache')).toBe('MISS');
    expect(withCredentials.body.errors?.[0]?.extensions?.['code']).toBe('OFFLINE_CACHE_MISS');
    const health = await getJson<{ localData: { posts: number } }>(`${proxy.url}/health`);
    expect(health.body.localData.posts).toBeGreaterThan(0);
  });
});
