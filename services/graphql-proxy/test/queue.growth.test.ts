import { mkdir, writeFile } from 'node:fs/promises';
import http from 'node:http';
import path from 'node:path';
import pino from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { buildApp, type ProxyApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { gql } from './support/client.js';
import { tempDir } from './support/processes.js';

// The app in-process, listening on a free port, in SETMODE in front of an upstream that is not there.
const dirs: Array<{ remove(): Promise<void> }> = [];
const apps: ProxyApp[] = [];
afterAll(async () => {
  for (const app of apps) await app.close();
  for (const dir of dirs) await dir.remove();
});

async function offlineProxy(env: Record<string, string>, prefill = 0): Promise<{ url: string; dir: string }> {
  const dir = await tempDir('proxy-growth');
  dirs.push(dir);
  const queueDir = path.join(dir.path, 'queue');
  await mkdir(queueDir, { recursive: true });
  for (let seq = 1; seq <= prefill; seq += 1) {
    const id = `00000000-0000-4000-8000-${String(seq).padStart(12, '0')}`;
    const item = {
      id,
      seq,
      createdAt: new Date(0).toISOString(),
      payload: {
        query: `mutation P${seq}($input: CreatePostInput!) { createPost(input: $input) { post { id } } }`,
        variables: { input: { title: `prefilled ${seq}` } },
        operationName: null,
      },
      idempotencyKey: id,
      status: 'pending',
      attempts: 0,
      nextAttemptAt: 0,
    };
    await writeFile(path.join(queueDir, `${String(seq).padStart(12, '0')}-${id}.json`), JSON.stringify(item));
  }
  const config = loadConfig(
    {
      UPSTREAM_GRAPHQL_ENDPOINT: 'http://127.0.0.1:9/graphql',
      GRAPHQL_MODE: 'SETMODE',
      LOCAL_SYNC_ON_START: 'false',
      PATHS_BASE_DIR: dir.path,
      QUEUE_DIR: queueDir,
      PROBE_INTERVAL_MS: '60000',
      ...env,
    },
    dir.path,
  );
  const app = await buildApp(config, pino({ level: 'silent' }));
  apps.push(app);
  const url = await app.fastify.listen({ port: 0, host: '127.0.0.1' });
  return { url, dir: dir.path };
}

const CREATE =
  'mutation Create($input: CreatePostInput!) { createPost(input: $input) { post { id title } } }';

/** The median time of one enqueue, in ms: a median, so one stall of a loaded machine cannot decide it. */
async function enqueueMs(url: string, count: number): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < count; i += 1) {
    const started = process.hrtime.bigint();
    const answer = await gql(url, CREATE, { input: { title: `t${i}` } });
    times.push(Number(process.hrtime.bigint() - started) / 1e6);
    expect(answer.body.extensions?.['queued']).toBe(true);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)] as number;
}

describe('queue growth', () => {
  it('enqueues in time independent of the queue length', async () => {
    const empty = await offlineProxy({});
    const long = await offlineProxy({}, 4000);
    await enqueueMs(empty.url, 20); // warm up
    const short = await enqueueMs(empty.url, 60);
    const deep = await enqueueMs(long.url, 60);
    expect(deep).toBeLessThan(Math.max(short * 3, short + 3));
  });

  it('refuses a mutation when QUEUE_MAX_ITEMS are queued, with QUEUE_FULL, queueing nothing', async () => {
    const { url } = await offlineProxy({ QUEUE_MAX_ITEMS: '3' });
    for (let i = 0; i < 3; i += 1) {
      expect((await gql(url, CREATE, { input: { title: `q${i}` } })).body.extensions?.['queued']).toBe(true);
    }
    const full = await gql(url, CREATE, { input: { title: 'one too many' } });
    expect(full.body.extensions?.['queued']).toBeUndefined();
    expect(full.body.errors?.[0]?.extensions).toMatchObject({ code: 'QUEUE_FULL', maxItems: 3 });
    const queue = (await (await fetch(`${url}/queue`)).json()) as { mutations: unknown[] };
    expect(queue.mutations).toHaveLength(3);
  });
});

describe('bad input on POST /graphql', () => {
  it('answers each with a GraphQL-shaped error and queues nothing', async () => {
    const { url } = await offlineProxy({ BODY_LIMIT_BYTES: '65536' });
    const post = (body: string, type = 'application/json') =>
      fetch(`${url}/graphql`, { method: 'POST', headers: { 'content-type': type }, body });
    const huge = await post(JSON.stringify({ query: `mutation { a } # ${'x'.repeat(70_000)}` }));
    expect(huge.status).toBe(413);
    expect(await huge.json()).toMatchObject({ errors: [{ extensions: { code: 'PAYLOAD_TOO_LARGE' } }] });
    // Without content-length (chunked), the limit is enforced while reading.
    const chunked = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const request = http.request(`${url}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'transfer-encoding': 'chunked' },
      });
      request.on('response', (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () =>
          resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString() }),
        );
      });
      request.on('error', reject);
      request.write(`{"query":"mutation { a } # ${'x'.repeat(40_000)}`);
      request.end(`${'y'.repeat(40_000)}"}`);
    });
    expect(chunked.status).toBe(413);
    expect(JSON.parse(chunked.body)).toMatchObject({
      errors: [{ extensions: { code: 'PAYLOAD_TOO_LARGE' } }],
    });
    const batch = await post(JSON.stringify([{ query: '{ posts { nodes { id } } }' }]));
    expect(await batch.json()).toMatchObject({
      errors: [{ message: expect.stringMatching(/[Bb]atch/), extensions: { code: 'BAD_REQUEST' } }],
    });
    const notString = await post(JSON.stringify({ query: { mutation: 'x' } }));
    expect(await notString.json()).toMatchObject({ errors: [{ extensions: { code: 'BAD_REQUEST' } }] });
    const broken = await post('{"query": "mutation {');
    expect(await broken.json()).toMatchObject({ errors: [{ extensions: { code: 'BAD_REQUEST' } }] });
    const queue = (await (await fetch(`${url}/queue`)).json()) as { mutations: unknown[] };
    expect(queue.mutations).toHaveLength(0);
  });
});
