import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BlogApp } from '../src/app.js';
import { DEVELOPMENT_AUTH_TOKEN, loadConfig } from '../src/config.js';
import { listenBlog } from './support/blog-server.js';

// The blog over a real socket, with its data in a throw-away directory.
let dir: string;
let app: BlogApp;
let url: string;

async function open(): Promise<void> {
  ({ app, url } = await listenBlog(dir));
}

interface Answer {
  status: number;
  body: {
    // biome-ignore lint/suspicious/noExplicitAny: answers are read by path in assertions, which check their shape
    data?: Record<string, any> | null;
    errors?: Array<{ message: string; extensions?: { code?: string } }>;
  };
  headers: Headers;
}

async function gql(query: string, variables?: object, headers: Record<string, string> = {}): Promise<Answer> {
  const response = await fetch(`${url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ query, variables }),
  });
  return {
    status: response.status,
    headers: response.headers,
    body: (await response.json()) as Answer['body'],
  };
}

const AUTH = { authorization: `Bearer ${DEVELOPMENT_AUTH_TOKEN}` };
const CREATE =
  'mutation ($input: CreatePostInput!) { createPost(input: $input) { post { id databaseId title slug status categories { nodes { slug } } tags { nodes { slug } } } } }';

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'blog-'));
  await open();
});

afterAll(async () => {
  await app?.close();
  await rm(dir, { recursive: true, force: true });
});

describe('queries', () => {
  it('pages posts newest first with cursors, hiding drafts from anonymous readers', async () => {
    const first = await gql(
      '{ posts(first: 5) { nodes { title date } pageInfo { hasNextPage endCursor } } }',
    );
    const posts = first.body.data?.['posts'];
    expect(posts.nodes).toHaveLength(5);
    expect(posts.nodes[0].title).toBe('Release notes');
    expect(posts.pageInfo.hasNextPage).toBe(true);
    const next = await gql(
      'query ($after: String) { posts(first: 100, after: $after) { nodes { title } pageInfo { hasNextPage } } }',
      {
        after: posts.pageInfo.endCursor,
      },
    );
    expect(next.body.data?.['posts'].nodes).toHaveLength(6);
    expect(next.body.data?.['posts'].pageInfo.hasNextPage).toBe(false);
    const all = await gql('{ posts(first: 100) { nodes { title } } }', undefined, AUTH);
    expect(all.body.data?.['posts'].nodes).toHaveLength(12);
  });

  it('looks up by global id, database id and slug, and resolves relations', async () => {
    const bySlug = await gql(
      '{ post(id: "hello-world", idType: SLUG) { id databaseId author { node { name } } categories { nodes { name } } } }',
    );
    const post = bySlug.body.data?.['post'];
    expect(post).toMatchObject({
      databaseId: 10,
      author: { node: { name: 'Ada Admin' } },
      categories: { nodes: [{ name: 'Uncategorized' }] },
    });
    const byId = await gql(
      'query ($id: ID!) { post(id: $id) { title } node(id: $id) { ... on Post { slug } } }',
      { id: post.id },
    );
    expect(byId.body.data).toEqual({ post: { title: 'Hello world' }, node: { slug: 'hello-world' } });
    const category = await gql(
      '{ category(id: "engineering", idType: SLUG) { name count posts(first: 2) { nodes { title } } } }',
    );
    expect(category.body.data?.['category']).toMatchObject({ name: 'Engineering', count: 9 });
    const lists = await gql('{ pages { nodes { title } } tags { nodes { name } } users { nodes { name } } }');
    expect(lists.body.data).toMatchObject({
      pages: { nodes: [{}, {}] },
      tags: { nodes: [{}, {}, {}] },
      users: { nodes: [{}, {}] },
    });
  });
});

describe('mutations', () => {
  it('require the bearer token', async () => {
    const none = await gql(CREATE, { input: { title: 'x' } });
    expect(none.body.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
    const wrong = await gql(CREATE, { input: { title: 'x' } }, { authorization: 'Bearer nope' });
    expect(wrong.body.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
  });

  it('create, update and delete posts and terms', async () => {
    const created = await gql(
      CREATE,
      {
        input: {
          title: 'Fresh post',
          categories: { nodes: [{ slug: 'news' }] },
          tags: { nodes: [{ slug: 'offline' }] },
        },
      },
      AUTH,
    );
    const post = created.body.data?.['createPost'].post;
    expect(post).toMatchObject({
      title: 'Fresh post',
      slug: 'fresh-post',
      status: 'publish',
      categories: { nodes: [{ slug: 'news' }] },
    });
    const duplicate = await gql(CREATE, { input: { title: 'Fresh post' } }, AUTH);
    expect(duplicate.body.data?.['createPost'].post.slug).toBe('fresh-post-2');
    const updated = await gql(
      'mutation ($id: ID!) { updatePost(input: { id: $id, title: "Renamed", status: DRAFT }) { post { title status } } }',
      { id: post.id },
      AUTH,
    );
    expect(updated.body.data?.['updatePost'].post).toEqual({ title: 'Renamed', status: 'draft' });
    const deleted = await gql(
      'mutation ($id: ID!) { deletePost(input: { id: $id }) { deletedId } }',
      { id: post.id },
      AUTH,
    );
    expect(deleted.body.data?.['deletePost'].deletedId).toBe(post.id);
    const gone = await gql(
      'mutation ($id: ID!) { deletePost(input: { id: $id }) { deletedId } }',
      { id: post.id },
      AUTH,
    );
    expect(gone.body.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');

    const category = await gql(
      'mutation { createCategory(input: { name: "Guides" }) { category { id slug } } }',
      undefined,
      AUTH,
    );
    expect(category.body.data?.['createCategory'].category.slug).toBe('guides');
    const again = await gql(
      'mutation { createCategory(input: { name: "Guides" }) { category { id } } }',
      undefined,
      AUTH,
    );
    expect(again.body.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    const tag = await gql(
      'mutation { updateTag(input: { id: "6", name: "GraphQL" }) { tag { name slug } } }',
      undefined,
      AUTH,
    );
    expect(tag.body.data?.['updateTag'].tag).toEqual({ name: 'GraphQL', slug: 'graphql' });
    const removed = await gql('mutation { deleteTag(input: { id: "8" }) { deletedId } }', undefined, AUTH);
    expect(removed.body.errors).toBeUndefined();
    const empty = await gql(CREATE, { input: { title: '  ' } }, AUTH);
    expect(empty.body.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
  });
});

describe('idempotency keys and persistence', () => {
  it('replays a stored answer for a repeated key and refuses a key reused with another body', async () => {
    const headers = { ...AUTH, 'idempotency-key': 'key-1' };
    const first = await gql(CREATE, { input: { title: 'Exactly once' } }, headers);
    const second = await gql(CREATE, { input: { title: 'Exactly once' } }, headers);
    expect(second.body).toEqual(first.body);
    expect(second.headers.get('idempotent-replayed')).toBe('true');
    const concurrent = await Promise.all(
      [1, 2, 3].map(() =>
        gql(CREATE, { input: { title: 'Raced' } }, { ...AUTH, 'idempotency-key': 'key-2' }),
      ),
    );
    expect(new Set(concurrent.map((answer) => JSON.stringify(answer.body))).size).toBe(1);
    const reused = await gql(CREATE, { input: { title: 'Something else' } }, headers);
    expect(reused.status).toBe(422);
    expect(reused.body.errors?.[0]?.extensions?.code).toBe('IDEMPOTENCY_KEY_REUSED');
    const all = await gql('{ posts(first: 100) { nodes { title } } }', undefined, AUTH);
    const nodes: Array<{ title: string }> = all.body.data?.['posts']?.nodes ?? [];
    const titles = nodes.map((post) => post.title);
    expect(titles.filter((title) => title === 'Exactly once')).toHaveLength(1);
    expect(titles.filter((title) => title === 'Raced')).toHaveLength(1);
  });

  it("tells what became of a key, asked with the key's credentials, and counts its arrivals", async () => {
    const KEY =
      'query ($key: String!, $query: String!, $variables: String) { idempotencyKey(key: $key, query: $query, variables: $variables) { state response arrivals } }';
    const ask = async (key: string, headers: Record<string, string> = AUTH, title = 'Looked up') =>
      (await gql(KEY, { key, query: CREATE, variables: JSON.stringify({ input: { title } }) }, headers)).body
        .data?.['idempotencyKey'];
    expect(await ask('key-lookup')).toEqual({ state: 'NOT_APPLIED', response: null, arrivals: 0 });
    // Asked while the request is executing: the question waits for it, so the answer is final.
    const sent = gql(CREATE, { input: { title: 'Looked up' } }, { ...AUTH, 'idempotency-key': 'key-lookup' });
    const [record, answer] = await Promise.all([
      new Promise((resolve) => setTimeout(resolve, 5)).then(() => ask('key-lookup')),
      sent,
    ]);
    expect(record.state).toBe('APPLIED');
    expect(JSON.parse(record.response)).toEqual(answer.body);
    expect(record.arrivals).toBe(1);
    await gql(CREATE, { input: { title: 'Looked up' } }, { ...AUTH, 'idempotency-key': 'key-lookup' });
    expect((await ask('key-lookup')).arrivals).toBe(2);
    // Another caller's credentials: another record.
    expect((await ask('key-lookup', {})).state).toBe('NOT_APPLIED');
    // A request that failed changed nothing: not applied, but it arrived.
    await gql(CREATE, { input: { title: '' } }, { ...AUTH, 'idempotency-key': 'key-failed' });
    expect(await ask('key-failed', AUTH, '')).toMatchObject({ state: 'NOT_APPLIED', arrivals: 1 });
  });

  it('keeps data and idempotency records across a restart', async () => {
    await app.close();
    await open();
    const again = await gql(
      CREATE,
      { input: { title: 'Exactly once' } },
      { ...AUTH, 'idempotency-key': 'key-1' },
    );
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    const all = await gql(
      '{ posts(first: 100) { nodes { title } } categories { nodes { name } } }',
      undefined,
      AUTH,
    );
    expect(JSON.stringify(all.body)).toContain('Raced');
    expect(JSON.stringify(all.body)).toContain('Guides');
    const health = await fetch(`${url}/health`);
    expect(await health.json()).toMatchObject({ status: 'ok' });
  });
});

describe('a crash between executing and answering', () => {
  it('reports the lost answer instead of executing the mutation again', async () => {
    const headers = { ...AUTH, 'idempotency-key': 'key-crash' };
    const first = await gql(CREATE, { input: { title: 'Executed before the crash' } }, headers);
    expect(first.body.errors).toBeUndefined();
    // What the files hold when the process dies after the mutation, before storing the answer: the
    // journal without its last line (the answer's; the mutation's line reserved the record).
    await app.close();
    const journal = path.join(dir, 'blog.journal');
    const lines = (await readFile(journal, 'utf8')).split('\n').filter((line) => line !== '');
    expect(lines.at(-1)).toContain('Executed before the crash');
    expect(lines.at(-2)).toContain('"body":null');
    await writeFile(journal, `${lines.slice(0, -1).join('\n')}\n`);
    await open();
    const again = await gql(CREATE, { input: { title: 'Executed before the crash' } }, headers);
    expect(again.status).toBe(409);
    expect(again.body.errors?.[0]?.extensions?.code).toBe('IDEMPOTENT_ANSWER_LOST');
    const all = await gql('{ posts(first: 100) { nodes { title } } }', undefined, AUTH);
    const nodes: Array<{ title: string }> = all.body.data?.['posts']?.nodes ?? [];
    expect(nodes.filter((post) => post.title === 'Executed before the crash')).toHaveLength(1);
  });
});

describe('config', () => {
  it('defaults to port 4000, ./data/blog-graphql and the development token; validates', () => {
    const config = loadConfig({}, '/srv');
    expect(config).toMatchObject({
      port: 4000,
      dataDir: '/srv/data/blog-graphql',
      authToken: 'blog-dev-token',
      usingDevelopmentToken: true,
    });
    expect(loadConfig({ BLOG_AUTH_TOKEN: 'a-long-secret' }).usingDevelopmentToken).toBe(false);
    expect(() => loadConfig({ BLOG_AUTH_TOKEN: 'short' })).toThrow(/BLOG_AUTH_TOKEN/);
    expect(() => loadConfig({ PORT: '-1' })).toThrow(/PORT/);
  });
});

describe('outside /graphql', () => {
  it('answers an unknown path 404 and a known path with another method 405, in the GraphQL error shape', async () => {
    const unknown = await fetch(`${url}/nope`);
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toEqual({
      errors: [{ message: 'no route GET /nope', extensions: { code: 'NOT_FOUND' } }],
    });
    const wrong = await fetch(`${url}/health`, { method: 'POST' });
    expect([wrong.status, wrong.headers.get('allow')]).toEqual([405, 'GET, HEAD']);
    expect((await wrong.json()).errors[0].extensions.code).toBe('METHOD_NOT_ALLOWED');
    const put = await fetch(`${url}/graphql`, { method: 'PUT' });
    expect([put.status, put.headers.get('allow')]).toEqual([405, 'GET, POST']);
    await put.text();
  });

  it('has a landing page at / linking the GraphQL endpoint and health', async () => {
    const page = await fetch(`${url}/`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toContain('text/html');
    const html = await page.text();
    expect(html).toContain('href="/graphql"');
    expect(html).toContain('href="/health"');
  });
});
