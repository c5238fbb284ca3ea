import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { listeningPorts } from '@platform/testkit/listening';
import { until } from '@platform/testkit/wait';
import { afterAll, describe, expect, it } from 'vitest';
import { DEVELOPMENT_AUTH_TOKEN } from '../src/config.js';

// Issue 41: the data must survive a restart and a crash mid-write must not corrupt it. A real blog
// process takes keyed mutations from four concurrent clients and is SIGKILLed at a random moment,
// BLOG_CRASH_ROUNDS times (default 2) on the same data folder, with a small journal compaction
// threshold so that kills also land while blog.json is rewritten. Then: it starts; every
// acknowledged mutation is there once, its key answers its answer; an unacknowledged one is there
// at most once, and its key says so; repeating every request creates nothing.
const ROUNDS = Number(process.env['BLOG_CRASH_ROUNDS'] ?? 2);
const ENTRY = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../src/server.ts');
const AUTH = `Bearer ${DEVELOPMENT_AUTH_TOKEN}`;
const CREATE = 'mutation ($input: CreatePostInput!) { createPost(input: $input) { post { id title } } }';
const LOOKUP =
  'query ($key: String!, $query: String!, $variables: String) { idempotencyKey(key: $key, query: $query, variables: $variables) { state response } }';

const children: ChildProcess[] = [];
let dir: string | undefined;
afterAll(async () => {
  for (const child of children) child.kill('SIGKILL');
  if (dir) await rm(dir, { recursive: true, force: true });
});

interface Blog {
  readonly url: string;
  readonly child: ChildProcess;
  readonly exited: Promise<void>;
  readonly output: () => string;
}

async function startBlog(dataDir: string): Promise<Blog> {
  const child = spawn(process.execPath, ['--import', 'tsx', ENTRY], {
    env: {
      ...process.env,
      PORT: '0',
      METRICS_PORT: 'off',
      BLOG_DATA_DIR: dataDir,
      BLOG_JOURNAL_COMPACT_BYTES: '4096',
      LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const port = await until(
    'the blog to answer /health',
    async () => {
      if (child.exitCode !== null) throw new Error(`the blog exited: ${output}`);
      for (const candidate of await listeningPorts(child.pid as number)) {
        const answer = await fetch(`http://127.0.0.1:${candidate}/health`).catch(() => undefined);
        if (answer?.ok) return candidate;
      }
      return undefined;
    },
    60_000,
  );
  return { url: `http://127.0.0.1:${port}`, child, exited, output: () => output };
}

const createBody = (title: string) => JSON.stringify({ query: CREATE, variables: { input: { title } } });

async function send(url: string, key: string): Promise<{ status: number; text: string }> {
  const response = await fetch(`${url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: AUTH, 'idempotency-key': key },
    body: createBody(key),
  });
  return { status: response.status, text: await response.text() };
}

async function gql(url: string, query: string, variables: object) {
  const response = await fetch(`${url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: AUTH },
    body: JSON.stringify({ query, variables }),
  });
  // biome-ignore lint/suspicious/noExplicitAny: read by path in the assertions below
  return (await response.json()) as { data?: any; errors?: unknown[] };
}

describe('SIGKILL while writing', () => {
  it('leaves the data readable, every acknowledged mutation kept once, none applied twice', async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'blog-crash-'));
    const acknowledged = new Map<string, string>();
    const sent: string[] = [];
    for (let round = 0; round < ROUNDS; round += 1) {
      const blog = await startBlog(dir);
      let stop = false;
      const client = async (lane: number) => {
        for (let n = 0; !stop; n += 1) {
          const key = `crash-${round}-${lane}-${n}`;
          sent.push(key);
          const answer = await send(blog.url, key).catch(() => undefined);
          if (answer === undefined) return; // the process is gone
          if (answer.status === 200 && !answer.text.includes('"errors"')) acknowledged.set(key, answer.text);
        }
      };
      const clients = [0, 1, 2, 3].map(client);
      await new Promise((resolve) => setTimeout(resolve, 400 + Math.random() * 800));
      blog.child.kill('SIGKILL');
      stop = true;
      await blog.exited;
      await Promise.all(clients);
    }
    expect(acknowledged.size).toBeGreaterThan(0);
    if (process.env['BLOG_CRASH_VERBOSE'])
      console.log(`sent ${sent.length}, acknowledged ${acknowledged.size}`);

    const blog = await startBlog(dir);
    // Posts with exactly this title (a search matches longer ones too).
    const count = async (title: string): Promise<number> =>
      (
        await gql(
          blog.url,
          'query ($s: String) { posts(first: 100, where: { search: $s }) { nodes { title } } }',
          { s: title },
        )
      ).data.posts.nodes.filter((post: { title: string }) => post.title === title).length;
    for (const key of sent) {
      const lookup = (
        await gql(blog.url, LOOKUP, {
          key,
          query: CREATE,
          variables: JSON.stringify({ input: { title: key } }),
        })
      ).data.idempotencyKey as { state: string; response: string | null };
      const copies = await count(key);
      const ack = acknowledged.get(key);
      if (ack !== undefined) {
        expect([key, copies, lookup.state, lookup.response]).toEqual([key, 1, 'APPLIED', ack]);
      } else {
        expect([key, copies]).toEqual([key, lookup.state === 'NOT_APPLIED' ? 0 : 1]);
      }
      // A repeat (the client retrying after the crash) never creates a second post.
      const again = await send(blog.url, key);
      if (ack !== undefined) expect([key, again.text]).toEqual([key, ack]);
      expect([key, await count(key)]).toEqual([key, lookup.state === 'NOT_APPLIED' ? 1 : copies]);
    }
    blog.child.kill('SIGTERM');
    await blog.exited;
  }, 240_000);
});
