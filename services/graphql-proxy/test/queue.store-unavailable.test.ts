import { mkdir, unlink } from 'node:fs/promises';
import path from 'node:path';
import { mountSmallDisk, type SmallDisk } from '@platform/testkit/tmpfs';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { eventually, getJson, gql, postTitles } from './support/client.js';
import { BLOG_TOKEN, type Blog, type ProxyProcess } from './support/processes.js';
import { type QueueProxy, startQueueProxy } from './support/queue-proxy.js';
import type { Relay } from './support/relay.js';

// The blog's disk full while a queued mutation is replayed: the blog answers STORE_UNAVAILABLE
// (nothing kept), and the replay retries it with backoff instead of keeping it as a rejection that
// blocks the queue until an operator acts. Space back, it is applied, once. The blog's data is on a
// real full file system (a small tmpfs, mounted here: these machines run the tests as root).
let setup: QueueProxy;
let disk: SmallDisk;
let blog: Blog;
let relay: Relay;
let proxy: ProxyProcess;

beforeAll(async () => {
  const started = await startQueueProxy('proxy-disk-full', {
    relay: true,
    // The blog's data on a 2 MiB tmpfs in the test folder.
    blogDir: async (dir) => {
      const mounted = path.join(dir, 'disk');
      await mkdir(mounted);
      disk = mountSmallDisk(mounted, '2m');
      return path.join(mounted, 'blog');
    },
    env: { PROBE_INTERVAL_MS: '200', RETRY_BASE_MS: '200', RETRY_MAX_MS: '400' },
  });
  setup = started;
  ({ blog, relay, proxy } = started);
});

afterAll(async () => {
  await setup?.stop();
  disk?.unmount();
  await setup?.dir.remove();
});

const CREATE =
  'mutation Create($input: CreatePostInput!) { createPost(input: $input) { post { id title } } }';

interface QueueView {
  mutations: Array<{ status: string; attempts: number; lastError: null | { message: string } }>;
}

it('a replay the full disk refused is retried, not rejected, and applied once when space is back', async () => {
  // Larger than a page: it cannot fit in the journal's last page partly used.
  const title = 'Written after the disk had room again'.padEnd(3 * 4096, '.');
  const filler = await disk.fill();
  // The caller's attempt never reaches the blog: the mutation is queued and replayed.
  relay.dropRequests(1, JSON.stringify(title).slice(0, 40));
  const answer = await gql(
    proxy.url,
    CREATE,
    { input: { title } },
    { authorization: `Bearer ${BLOG_TOKEN}` },
  );
  expect(answer.body.extensions?.['queued']).toBe(true);
  const retried = await eventually(
    'replays refused by the full disk',
    async () => {
      const { body } = await getJson<QueueView>(`${proxy.url}/queue`);
      const head = body.mutations[0];
      return head && head.attempts >= 3 ? head : undefined;
    },
    20_000,
  );
  expect(retried.status).toBe('pending');
  expect(retried.lastError?.message).toMatch(/disk full or failing/);
  await unlink(filler);
  await eventually(
    'the queue to drain',
    async () => {
      const { body } = await getJson<QueueView>(`${proxy.url}/queue`);
      return body.mutations.length === 0 ? true : undefined;
    },
    20_000,
  );
  const titles = postTitles(
    await gql(blog.url, '{ posts(first: 100) { nodes { title } } }', undefined, {
      authorization: `Bearer ${BLOG_TOKEN}`,
    }),
  );
  expect(titles.filter((t) => t === title)).toHaveLength(1);
}, 60_000);
