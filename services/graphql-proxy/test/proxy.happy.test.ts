import { existsSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, getJson, gql, postTitles } from './support/client.js';
import {
  BLOG_TOKEN,
  type Blog,
  type ProxyProcess,
  startBlog,
  startProxy,
  tempDir,
} from './support/processes.js';
import { type Relay, startRelay } from './support/relay.js';

// The proxy (GETMODE and CRUDMODE) in front of the real blog upstream, with a counting relay between.
let dir: Awaited<ReturnType<typeof tempDir>>;
let blog: Blog;
let relay: Relay;
let getProxy: ProxyProcess;
let crudProxy: ProxyProcess;

beforeAll(async () => {
  dir = await tempDir('proxy-happy');
  blog = await startBlog(path.join(dir.path, 'blog'));
  relay = await startRelay(blog.graphqlUrl);
  [getProxy, crudProxy] = await Promise.all([
    startProxy(path.join(dir.path, 'get'), {
      UPSTREAM_GRAPHQL_ENDPOINT: relay.url,
      CORS_ORIGIN: 'https://blog.example, http://localhost:3000',
    }),
    startProxy(path.join(dir.path, 'crud'), {
      UPSTREAM_GRAPHQL_ENDPOINT: relay.url,
      AUTH_TOKEN: BLOG_TOKEN,
      GRAPHQL_MODE: 'CRUDMODE',
    }),
  ]);
});

afterAll(async () => {
  await Promise.all([getProxy?.close(), crudProxy?.close()]);
  await relay?.close();
  await blog?.close();
  await dir?.remove();
});

const POSTS = 'query Posts($first: Int) { posts(first: $first) { nodes { id title slug } } }';

function upstreamCount(marker: string): number {
  return relay.bodies.filter((body) => body.includes(marker)).length;
}

describe('queries through the cache', () => {
  it('answers the second identical query from the cache, keyed by a file in CACHE_DIR', async () => {
    const query = '{ categories(first: 5) { nodes { id name } } }';
    const first = await gql(getProxy.url, query);
    const second = await gql(getProxy.url, query);
    expect(first.status).toBe(200);
    expect(first.headers.get('x-cache')).toBe('MISS');
    expect(first.headers.get('x-upstream-status')).toBe('200');
    expect(second.headers.get('x-cache')).toBe('HIT');
    expect(second.body).toEqual(first.body);
    const key = second.headers.get('x-cache-key') ?? '';
    expect(key).toMatch(/^[0-9a-f]{64}$/);
    await eventually('the cache file', async () =>
      existsSync(path.join(dir.path, 'get/data/graphql-proxy/cache', `${key}.json`)) ? true : undefined,
    );
    expect(upstreamCount('categories(first: 5)')).toBe(1);
  });

  it('ignores whitespace, comments and the order of variables, but not the caller', async () => {
    const query =
      'query Two($first: Int, $after: String) { posts(first: $first, after: $after) { nodes { id } } }';
    const first = await gql(getProxy.url, query, { first: 2, after: null });
    const reformatted = await gql(
      getProxy.url,
      `# a comment\nquery Two($first: Int,   $after: String) {\n  posts(first: $first, after: $after) { nodes { id } }\n}`,
      { after: null, first: 2 },
    );
    expect(reformatted.headers.get('x-cache')).toBe('HIT');
    expect(reformatted.headers.get('x-cache-key')).toBe(first.headers.get('x-cache-key'));
    const otherUser = await gql(
      getProxy.url,
      query,
      { first: 2, after: null },
      { authorization: 'Bearer someone-else' },
    );
    expect(otherUser.headers.get('x-cache')).toBe('MISS');
    expect(otherUser.headers.get('x-cache-key')).not.toBe(first.headers.get('x-cache-key'));
  });

  it("never serves one caller's private answer to another, nor lends AUTH_TOKEN to anonymous queries", async () => {
    const query = '{ posts(first: 100) { nodes { title } } }';
    const owner = await gql(crudProxy.url, query, undefined, { authorization: `Bearer ${BLOG_TOKEN}` });
    const anonymous = await gql(crudProxy.url, query);
    expect(postTitles(owner)).toContain('Draft: upcoming features');
    expect(postTitles(anonymous)).not.toContain('Draft: upcoming features');
    expect(anonymous.headers.get('x-cache')).toBe('MISS');
    const ownerAgain = await gql(crudProxy.url, query, undefined, { authorization: `Bearer ${BLOG_TOKEN}` });
    expect(ownerAgain.headers.get('x-cache')).toBe('HIT');
    expect(postTitles(ownerAgain)).toContain('Draft: upcoming features');
  });

  it('does not cache an answer with errors', async () => {
    const query = '{ posts { nodes { noSuchField } } }';
    const first = await gql(getProxy.url, query);
    const second = await gql(getProxy.url, query);
    expect(first.body.errors?.length).toBeGreaterThan(0);
    expect(first.status).toBe(200);
    expect(second.headers.get('x-cache')).toBe('MISS');
  });

  it('sends identical concurrent queries upstream once', async () => {
    const query = '{ tags(first: 7) { nodes { id name slug } } }';
    // The upstream answers only once all twelve have missed the cache, so none can be a cache hit:
    // one upstream call for twelve misses is the coalescing itself.
    const misses = async () => {
      const text = await (await fetch(await getProxy.metricsUrl())).text();
      return Number(/^graphql_proxy_cache_misses_total (\d+)$/m.exec(text)?.[1]);
    };
    const before = await misses();
    const held = relay.hold('tags(first: 7)');
    const pending = Promise.all(Array.from({ length: 12 }, () => gql(getProxy.url, query)));
    await eventually('twelve cache misses', async () => ((await misses()) - before >= 12 ? true : undefined));
    held.release();
    const answers = await pending;
    expect(answers.map((answer) => answer.headers.get('x-cache'))).toEqual(Array(12).fill('MISS'));
    expect(new Set(answers.map((answer) => JSON.stringify(answer.body))).size).toBe(1);
    expect(answers[0]?.body.data).toBeTruthy();
    expect(upstreamCount('tags(first: 7)')).toBe(1);
  });

  it('answers malformed requests with a GraphQL error body and HTTP 200', async () => {
    const notJson = await fetch(`${getProxy.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"query": ',
    });
    expect(notJson.status).toBe(200);
    expect(
      ((await notJson.json()) as { errors: Array<{ extensions: { code: string } }> }).errors[0]?.extensions
        .code,
    ).toBe('BAD_REQUEST');
    const wrongType = await fetch(`${getProxy.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'text/plain' },
      body: '{ posts { nodes { id } } }',
    });
    expect(wrongType.status).toBe(200);
    expect(await wrongType.json()).toMatchObject({ errors: [{ extensions: { code: 'BAD_REQUEST' } }] });
    const huge = await gql(getProxy.url, `{ posts { nodes { id } } } # ${'x'.repeat(1_100_000)}`);
    expect(huge.status).toBe(413);
    expect(huge.body.errors?.[0]?.message).toMatch(/exceeds/);
    expect(huge.body.errors?.[0]?.extensions?.['code']).toBe('PAYLOAD_TOO_LARGE');
    const noQuery = await fetch(`${getProxy.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ variables: {} }),
    });
    expect(await noQuery.json()).toMatchObject({ errors: [{ extensions: { code: 'BAD_REQUEST' } }] });
    const syntax = await gql(getProxy.url, '{ posts { ');
    expect(syntax.body.errors?.[0]?.extensions?.['code']).toBe('GRAPHQL_PARSE_FAILED');
  });
});

describe('bodies over BODY_LIMIT_BYTES', () => {
  // Sent to the process itself, not through its front, so that what is measured is the proxy's socket.
  const port = (): number => {
    const bound = getProxy.listeningPort();
    if (bound === undefined) throw new Error('the proxy is not listening');
    return bound;
  };
  const direct = () => `http://127.0.0.1:${port()}`;

  it('answers 413 to each even while the client is still sending it, and the connection goes on', async () => {
    // The answer goes out before the body is read; were the socket closed then, the client (still
    // writing) would often get EPIPE or a reset instead of the answer: about 1 in 20 did before the
    // rest of the body was drained.
    const statuses: Array<number | string> = [];
    for (let i = 0; i < 80; i += 1) {
      const query = `{ posts { nodes { id } } } # ${'x'.repeat(1_100_000 + i * 4_099)}`;
      statuses.push(
        await gql(direct(), query).then(
          (answer) => answer.status,
          (error: Error) => error.message,
        ),
      );
    }
    expect(statuses).toEqual(Array(80).fill(413));
    const after = await gql(direct(), '{ posts(first: 1) { nodes { id } } }');
    expect(after.status).toBe(200);
    expect(after.body.errors).toBeUndefined();
  });

  it('stops reading an endless chunked body a few megabytes after the answer', async () => {
    // A raw socket: node's own client stops sending once it has the answer, which would hide this.
    const outcome = await new Promise<{ answer: string; sent: number; cut: boolean }>((resolve) => {
      const socket = net.connect(port(), '127.0.0.1');
      const chunk = Buffer.concat([
        Buffer.from('10000\r\n'),
        Buffer.alloc(0x10000, 'x'),
        Buffer.from('\r\n'),
      ]);
      let answer = '';
      let sent = 0;
      let done = false;
      const finish = (cut: boolean) => {
        if (done) return;
        done = true;
        socket.destroy();
        resolve({ answer, sent, cut });
      };
      socket.on('data', (data: Buffer) => {
        answer += data.toString('latin1');
      });
      socket.on('error', () => finish(true));
      socket.on('close', () => finish(true));
      // The client reads nothing until its writes have been blocked for 300 ms, as a client busy
      // writing on a loaded machine: the answer must still be there to read (not lost to a reset).
      socket.pause();
      let reading = false;
      const pump = () => {
        while (!done && sent < 64 * 1_048_576) {
          sent += 0x10000;
          if (!socket.write(chunk)) {
            if (!reading) setTimeout(() => socket.resume(), 300);
            reading = true;
            return void socket.once('drain', pump);
          }
        }
        finish(false);
      };
      socket.write(
        'POST /graphql HTTP/1.1\r\nhost: proxy\r\ncontent-type: application/json\r\n' +
          'transfer-encoding: chunked\r\n\r\n',
      );
      pump();
    });
    expect(outcome.answer).toMatch(/^HTTP\/1\.1 413 /);
    expect(outcome.answer).toContain('PAYLOAD_TOO_LARGE');
    expect(outcome.cut).toBe(true);
    expect(outcome.sent).toBeLessThan(32 * 1_048_576);
  });
});

describe('modes online', () => {
  it('GETMODE blocks mutations without calling the upstream', async () => {
    const answer = await gql(
      getProxy.url,
      'mutation { createPost(input: { title: "Blocked" }) { post { id } } }',
    );
    expect(answer.status).toBe(200);
    expect(answer.body.errors?.[0]?.extensions?.['code']).toBe('MUTATIONS_DISABLED');
    expect(answer.body.errors?.[0]?.message).toMatch(/GETMODE/);
    expect(upstreamCount('Blocked')).toBe(0);
  });

  it('CRUDMODE executes a mutation and invalidates the cached queries it touched', async () => {
    const before = await gql(crudProxy.url, POSTS, { first: 50 });
    expect((await gql(crudProxy.url, POSTS, { first: 50 })).headers.get('x-cache')).toBe('HIT');
    const created = await gql(
      crudProxy.url,
      'mutation Create($input: CreatePostInput!) { createPost(input: $input) { post { id title } } }',
      { input: { title: 'Written through CRUDMODE' } },
    );
    expect(created.body.errors).toBeUndefined();
    const after = await gql(crudProxy.url, POSTS, { first: 50 });
    expect(after.headers.get('x-cache')).toBe('MISS');
    const titles = postTitles(after);
    expect(titles).toContain('Written through CRUDMODE');
    expect(titles.length).toBe(postTitles(before).length + 1);
  });

  it('CRUDMODE passes an upstream rejection through unchanged', async () => {
    const answer = await gql(crudProxy.url, 'mutation { createPost(input: { title: "" }) { post { id } } }');
    expect(answer.body.errors?.[0]?.extensions?.['code']).toBe('BAD_USER_INPUT');
  });
});

describe('health and CORS', () => {
  it('reports the original health fields', async () => {
    const { status, body } = await getJson(`${crudProxy.url}/health`);
    expect(status).toBe(200);
    expect(body).toMatchObject({
      mode: 'CRUDMODE',
      upstream: 'configured',
      authToken: true,
      port: crudProxy.listeningPort(),
      queuedMutations: 0,
      upstreamState: 'online',
    });
    expect(body['localData']).toMatchObject({ posts: expect.any(Number), lastUpdated: null });
    const get = await getJson(`${getProxy.url}/health`);
    expect(get.body).toMatchObject({ mode: 'GETMODE', authToken: false });
  });

  it('answers a preflight with 204 for a listed origin and withholds the header for others', async () => {
    const allowed = await fetch(`${getProxy.url}/graphql`, {
      method: 'OPTIONS',
      headers: {
        origin: 'http://localhost:3000',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'content-type, authorization',
      },
    });
    expect(allowed.status).toBe(204);
    expect(allowed.headers.get('access-control-allow-origin')).toBe('http://localhost:3000');
    expect(allowed.headers.get('access-control-allow-headers')).toMatch(/content-type/);
    expect(allowed.headers.get('access-control-allow-headers')).toMatch(/authorization/);
    const other = await fetch(`${getProxy.url}/health`, { headers: { origin: 'https://evil.example' } });
    expect(other.headers.get('access-control-allow-origin')).toBeNull();
  });
});
