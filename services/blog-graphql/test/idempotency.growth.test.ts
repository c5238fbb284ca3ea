import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEVELOPMENT_AUTH_TOKEN } from '../src/config.js';
import { type ListeningBlog, listenBlog } from './support/blog-server.js';

// Issue 41: 600 anonymous POST /graphql queries, each with its own Idempotency-Key, grew blog.json
// from 6 kB to 924 kB (kept 24 h), and the whole file was rewritten per request. Over a real socket.
const AUTH = { authorization: `Bearer ${DEVELOPMENT_AUTH_TOKEN}` };
const QUERY = '{ posts(first: 10) { nodes { id title } } }';
const CREATE = 'mutation ($input: CreatePostInput!) { createPost(input: $input) { post { id title } } }';
const LOOKUP =
  'query ($key: String!, $query: String!, $variables: String, $operationName: String) { idempotencyKey(key: $key, query: $query, variables: $variables, operationName: $operationName) { state response arrivals } }';
const ENV = { IDEMPOTENCY_MAX_KEYS: '5' };

let dir: string;
let blog: ListeningBlog;

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'blog-growth-'));
  blog = await listenBlog(dir, ENV);
});
afterAll(async () => {
  await blog?.app.close();
  await rm(dir, { recursive: true, force: true });
});

interface Answer {
  readonly status: number;
  readonly headers: Headers;
  // biome-ignore lint/suspicious/noExplicitAny: answers are read by path in assertions, which check their shape
  readonly body: { data?: any; errors?: Array<{ message: string; extensions?: { code?: string } }> };
}

async function post(body: object, headers: Record<string, string> = {}): Promise<Answer> {
  const response = await fetch(`${blog.url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  return {
    status: response.status,
    headers: response.headers,
    body: (await response.json()) as Answer['body'],
  };
}

const create = (title: string, key: string) =>
  post({ query: CREATE, variables: { input: { title } } }, { ...AUTH, 'idempotency-key': key });

async function lookUp(key: string, request: { query: string; variables?: unknown; operationName?: string }) {
  return post(
    {
      query: LOOKUP,
      variables: {
        key,
        query: request.query,
        variables: request.variables === undefined ? null : JSON.stringify(request.variables),
        operationName: request.operationName ?? null,
      },
    },
    AUTH,
  );
}

async function folder(): Promise<Record<string, number>> {
  const sizes: Record<string, number> = {};
  for (const name of await readdir(dir)) sizes[name] = (await stat(path.join(dir, name))).size;
  return sizes;
}

describe('anonymous callers with keys of their own', () => {
  it('600 keyed queries store nothing: the data folder does not change', async () => {
    await blog.app.store.flush();
    const before = await folder();
    for (let batch = 0; batch < 600; batch += 20) {
      const answers = await Promise.all(
        Array.from({ length: 20 }, (_, n) =>
          post({ query: QUERY }, { 'idempotency-key': `anon-${batch + n}` }),
        ),
      );
      for (const answer of answers) expect(answer.body.data?.posts.nodes.length).toBeGreaterThan(0);
    }
    await blog.app.store.flush();
    expect(await folder()).toEqual(before);
    expect(blog.app.store.answers.size).toBe(0);
    // A keyed query is executed again, not replayed, and leaves no record.
    const again = await post({ query: QUERY }, { 'idempotency-key': 'anon-0' });
    expect(again.headers.get('idempotent-replayed')).toBeNull();
    expect((await lookUp('anon-0', { query: QUERY })).body.data?.idempotencyKey.state).toBe('NOT_APPLIED');
  }, 120_000); // 600 requests: about 5 s, 30 s at a load average of 38
});

describe('keyed mutations', () => {
  it('append to the journal: blog.json is not rewritten per request', async () => {
    await blog.app.store.flush();
    const snapshot = await stat(path.join(dir, 'blog.json'));
    const journal = (await folder())['blog.journal'] ?? 0;
    for (let n = 0; n < 20; n += 1) expect((await create(`journalled ${n}`, `j-${n}`)).status).toBe(200);
    await blog.app.store.flush();
    const after = await stat(path.join(dir, 'blog.json'));
    expect([after.ino, after.mtimeMs, after.size]).toEqual([snapshot.ino, snapshot.mtimeMs, snapshot.size]);
    expect((await folder())['blog.journal']).toBeGreaterThan(journal);
  });

  it('are kept at most IDEMPOTENCY_MAX_KEYS, the oldest dropped first, across a restart', async () => {
    const keys = Array.from({ length: 8 }, (_, n) => `bounded-${n}`);
    for (const [n, key] of keys.entries()) await create(`bounded ${n}`, key);
    const states = async () =>
      Promise.all(
        keys.map(
          async (key, n) =>
            (await lookUp(key, { query: CREATE, variables: { input: { title: `bounded ${n}` } } })).body.data
              ?.idempotencyKey.state,
        ),
      );
    const expected = [...Array(3).fill('NOT_APPLIED'), ...Array(5).fill('APPLIED')];
    expect(await states()).toEqual(expected);
    expect(blog.app.store.answers.size).toBe(5);
    await blog.app.close();
    blog = await listenBlog(dir, ENV);
    expect(await states()).toEqual(expected);
    // The replay of a kept one still works; a dropped one would execute again.
    const replayed = await create('bounded 7', 'bounded-7');
    expect(replayed.headers.get('idempotent-replayed')).toBe('true');
  });
});

describe('idempotencyKey(key) checks the mutation it is asked about', () => {
  it('answers the stored answer for the same operation and variables, however spelled', async () => {
    const sent = await create('checked', 'checked-key');
    const same = await lookUp('checked-key', {
      query: `  mutation ($input: CreatePostInput!) {
        createPost(input: $input) { post { id, title } }  # spacing, commas and comments do not matter
      }`,
      variables: { input: { title: 'checked' } },
    });
    expect(same.body.errors).toBeUndefined();
    expect(same.body.data?.idempotencyKey.state).toBe('APPLIED');
    expect(JSON.parse(same.body.data?.idempotencyKey.response)).toEqual(sent.body);
  });

  it("refuses another mutation's record under the key, in the blog's error shape", async () => {
    await create('the original', 'taken-key');
    for (const other of [
      { query: CREATE, variables: { input: { title: 'another title' } } },
      {
        query: CREATE.replace('post { id title }', 'post { id }'),
        variables: { input: { title: 'the original' } },
      },
      {
        query: `mutation Named${CREATE.slice('mutation'.length)}`,
        variables: { input: { title: 'the original' } },
        operationName: 'Named',
      },
    ]) {
      const answer = await lookUp('taken-key', other);
      expect(answer.status).toBe(200);
      expect(answer.body.data ?? null).toBeNull();
      expect(answer.body.errors).toEqual([
        expect.objectContaining({
          message:
            'This Idempotency-Key was used with another request (another operation or other variables)',
          extensions: expect.objectContaining({ code: 'IDEMPOTENCY_KEY_REUSED' }),
        }),
      ]);
    }
  });
});
