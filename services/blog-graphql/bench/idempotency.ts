import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type ServiceProcess, startServiceProcess } from '@platform/testkit/app';

/**
 * Issue 41: 600 anonymous queries, each with its own Idempotency-Key, grew blog.json from 6 kB to
 * 924 kB and the whole file was rewritten per request (median latency 24 -> 37 ms). Two parts, each
 * against an anchor measured in the same run, in alternating requests on one keep-alive connection:
 *
 * 1. anonymous queries with a fresh key each vs the same query without a key: median latency ratio
 *    (target ~1.0x: a query's answer is not stored) and the data folder's size before and after;
 * 2. keyed mutations vs unkeyed queries, first on an almost empty idempotency store, then after
 *    BENCH_RECORDS (default 3000) more keyed mutations: the ratio must not grow with the store (the
 *    file was rewritten with every record on every mutation; now one journal line is appended). The
 *    mutations update one post (its title), so the content stays the same size and only the
 *    idempotency store grows.
 *
 * Usage: npx tsx services/blog-graphql/bench/idempotency.ts (BENCH_QUERIES, default 600; BENCH_RECORDS,
 * default 3000; BENCH_MUTATIONS, default 300; BENCH_BLOG_ROOT: another checkout whose blog is measured,
 * for a before/after on the same machine). Prints the machine's load average beside each figure.
 */

const HERE = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.resolve(HERE, '../../..');
const BLOG_ROOT = process.env['BENCH_BLOG_ROOT'] ?? ROOT;
const QUERIES = Number(process.env['BENCH_QUERIES'] ?? 600);
const RECORDS = Number(process.env['BENCH_RECORDS'] ?? 3000);
const MUTATIONS = Number(process.env['BENCH_MUTATIONS'] ?? 300);
const AUTH = 'Bearer blog-dev-token';
const QUERY = '{ posts(first: 10) { nodes { id title } } }';
const UPDATE = 'mutation ($input: UpdatePostInput!) { updatePost(input: $input) { post { id title } } }';

const median = (values: readonly number[]): number =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? Number.NaN;
const load = (): string =>
  loadavg()
    .map((value) => value.toFixed(1))
    .join(' ');

async function folderBytes(dir: string): Promise<number> {
  let total = 0;
  for (const name of await readdir(dir)) total += (await stat(path.join(dir, name))).size;
  return total;
}

async function timed(url: string, body: object, headers: Record<string, string>): Promise<number> {
  const started = performance.now();
  const response = await fetch(`${url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  const elapsed = performance.now() - started;
  if (response.status !== 200 || text.includes('"errors"')) throw new Error(`${response.status} ${text}`);
  return elapsed;
}

let keys = 0;
function key(): string {
  keys += 1;
  return `bench-${process.pid}-${keys}`;
}

/** `rounds` alternating pairs: (measured, anchor), which one goes first alternating too. */
async function alternate(
  rounds: number,
  measured: () => Promise<number>,
  anchor: () => Promise<number>,
): Promise<{ measured: number; anchor: number; ratio: number }> {
  const a: number[] = [];
  const b: number[] = [];
  for (let round = 0; round < rounds; round += 1) {
    if (round % 2 === 0) {
      a.push(await measured());
      b.push(await anchor());
    } else {
      b.push(await anchor());
      a.push(await measured());
    }
  }
  return { measured: median(a), anchor: median(b), ratio: median(a) / median(b) };
}

async function main(): Promise<void> {
  const dir = await mkdtemp(path.join(tmpdir(), 'blog-bench-'));
  let blog: ServiceProcess | undefined;
  try {
    blog = await startServiceProcess({
      name: 'blog-graphql',
      entry: path.join(BLOG_ROOT, 'services/blog-graphql/src/server.ts'),
      cwd: ROOT,
      port: 0,
      env: { BLOG_DATA_DIR: dir, LOG_LEVEL: 'warn', METRICS_PORT: 'off' },
      healthPath: '/health',
    });
    const url = blog.url;
    console.log(`blog from ${BLOG_ROOT}`);
    const query = () => timed(url, { query: QUERY }, {});
    for (let n = 0; n < 50; n += 1) await query(); // warm-up

    const before = await folderBytes(dir);
    const queries = await alternate(
      QUERIES,
      () => timed(url, { query: QUERY }, { 'idempotency-key': key() }),
      query,
    );
    const after = await folderBytes(dir);
    console.log(
      `1. ${QUERIES} anonymous keyed queries vs unkeyed: median ${queries.measured.toFixed(2)} / ` +
        `${queries.anchor.toFixed(2)} ms = ${queries.ratio.toFixed(2)}x; data folder ${before} -> ${after} bytes ` +
        `(load ${load()})`,
    );

    const first = await fetch(`${url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ posts(first: 1) { nodes { id } } }' }),
    });
    const id = ((await first.json()) as { data: { posts: { nodes: Array<{ id: string }> } } }).data.posts
      .nodes[0]?.id;
    const mutation = () =>
      timed(
        url,
        { query: UPDATE, variables: { input: { id, title: `bench ${keys % 2}` } } },
        { authorization: AUTH, 'idempotency-key': key() },
      );
    const empty = await alternate(MUTATIONS, mutation, query);
    const filled = performance.now();
    for (let n = 0; n < RECORDS; n += 1) await mutation();
    const fillSeconds = (performance.now() - filled) / 1000;
    const full = await alternate(MUTATIONS, mutation, query);
    console.log(
      `2. keyed mutations vs unkeyed queries: ${empty.measured.toFixed(2)} / ${empty.anchor.toFixed(2)} ms = ` +
        `${empty.ratio.toFixed(2)}x with ${MUTATIONS} records; after ${RECORDS} more (${fillSeconds.toFixed(1)} s): ` +
        `${full.measured.toFixed(2)} / ${full.anchor.toFixed(2)} ms = ${full.ratio.toFixed(2)}x; growth ` +
        `${(full.ratio / empty.ratio).toFixed(2)}x; data folder ${await folderBytes(dir)} bytes (load ${load()})`,
    );
  } finally {
    await blog?.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

await main();
