/**
 * The read benchmark a cache cannot flatter (issue 20): 100,000 events, ids and list pages drawn
 * uniformly over the whole range (deep pages included), 5% writes (PUT/DELETE) interleaved, on
 * PGlite and PostgreSQL. Anchors in the same run: the constant route (`anchor-server.ts`) and the
 * bare-SQL route (`sql-anchor-server.ts`: the same SQL through the same driver), so the ratios
 * separate this service's overhead from the database's. Also the list p99 of the first page
 * against the deepest one, with the read cache off so the database answers every request.
 *
 *   npm run bench:mix -w services/events      # BENCH_SECONDS (5), BENCH_ROUNDS (3), BENCH_EVENTS (100000)
 *
 * Targets: >= 0.8x the bare-SQL anchor on both operations; deepest-page p99 <= 2x the first page's.
 */
import { execFile } from 'node:child_process';
import { cp, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { type ServiceProcess, startServiceProcess } from '@platform/testkit/app';
import { cpuMicros, processTree } from '@platform/testkit/cpu';
import { createTestDatabase } from '@platform/testkit/postgres';
import { median } from '@platform/testkit/stats';
import { SignJWT } from 'jose';
import { migrate } from '../src/storage/migrations.js';
import { createPgClient } from '../src/storage/pg-client.js';
import { createPgliteClient } from '../src/storage/pglite-client.js';
import type { SqlClient } from '../src/storage/sql-client.js';
import { seedEvents } from './seed.js';

const run = promisify(execFile);
const root = resolve(import.meta.dirname, '..');
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
// Rounds of (bare SQL, events) per operation, the order alternating (ABBA) so drift in the machine's
// load falls on both sides; the figure is the median of the rounds' ratios.
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 16);
const EVENTS = Number(process.env.BENCH_EVENTS ?? 100_000);
const SECRET = 'bench-secret-bench-secret-bench-secret!!';
// Every tenth seeded event is PRIVATE (seed.ts): anonymous lists page over the other 90%.
const PAGES = Math.ceil((EVENTS * 0.9) / 100);

interface Measure {
  rps: number;
  p99Ms: number;
  /**
   * CPU time (user + system) the server process spent per request, in microseconds: the
   * load-independent view of its own cost (PostgreSQL's work is not in it). NaN without a pid.
   */
  cpuUs: number;
}

/** CPU time of a started server and its children (NaN without a pid). */
function serverCpu(pid: number | undefined): number {
  return pid === undefined ? Number.NaN : cpuMicros(processTree(pid));
}

async function wrk(
  url: string,
  env: Record<string, string> = {},
  script?: string,
  pid?: number,
): Promise<Measure> {
  const args = ['-t1', `-c${CONNECTIONS}`, ...(script ? ['-s', script] : [])];
  const options = { env: { ...process.env, ...env } };
  await run('wrk', [...args, '-d1s', url], options); // warm-up
  const cpuBefore = serverCpu(pid);
  const { stdout } = await run('wrk', [...args, `-d${SECONDS}s`, '--latency', url], options);
  const cpu = serverCpu(pid) - cpuBefore;
  const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(stdout)?.[1]);
  const requests = Number(/(\d+) requests in/.exec(stdout)?.[1]);
  const p99 = /\s99%\s+([\d.]+)(us|ms|s)/.exec(stdout);
  if (!p99 || Number.isNaN(rps)) throw new Error(`unexpected wrk output:\n${stdout}`);
  const scale = p99[2] === 'us' ? 0.001 : p99[2] === 's' ? 1000 : 1;
  return { rps, p99Ms: Number(p99[1]) * scale, cpuUs: cpu / requests };
}

/**
 * `ROUNDS` rounds of the bare-SQL anchor and the service on one mix, the order alternating; the
 * printed figure is the median of the per-round ratios, each round's pair measured minutes apart at
 * most, so a machine whose load drifts moves both sides of a ratio together.
 */
async function rounds(
  sql: () => Promise<Measure>,
  events: () => Promise<Measure>,
): Promise<{ sql: Measure[]; events: Measure[] }> {
  const out = { sql: [] as Measure[], events: [] as Measure[] };
  for (let round = 0; round < ROUNDS; round++) {
    if (round % 2 === 0) {
      out.sql.push(await sql());
      out.events.push(await events());
    } else {
      out.events.push(await events());
      out.sql.push(await sql());
    }
  }
  return out;
}

async function prepare(client: SqlClient): Promise<void> {
  await migrate(client);
  await seedEvents(client, EVENTS);
  await client.query('VACUUM ANALYZE events'); // the visibility map autovacuum would set
  await client.close();
}

function line(label: string, name: string, anchor: Measure, sql: Measure[], events: Measure[]): void {
  const ratios = sql.map((s, i) => (events[i] as Measure).rps / s.rps);
  const ratio = median(ratios);
  const pick = (ms: Measure[], key: 'rps' | 'p99Ms' | 'cpuUs') => median(ms.map((m) => m[key]));
  console.log(
    `${label.padEnd(9)} ${name.padEnd(9)} | constant ${anchor.rps.toFixed(0).padStart(6)} rps | ` +
      `bare SQL ${pick(sql, 'rps').toFixed(0).padStart(6)} rps p99 ${pick(sql, 'p99Ms').toFixed(1)} ms | ` +
      `events ${pick(events, 'rps').toFixed(0).padStart(6)} rps p99 ${pick(events, 'p99Ms').toFixed(1)} ms | ` +
      `${ratio.toFixed(2)}x bare SQL (target 0.8x) ${ratio >= 0.8 ? 'OK' : 'BELOW'}`,
  );
  console.log(
    `${''.padEnd(9)} ${''.padEnd(9)} | rounds ${ratios.map((r) => `${r.toFixed(2)}x`).join(' ')} | ` +
      `server CPU per request: bare SQL ${pick(sql, 'cpuUs').toFixed(0)} us, ` +
      `events ${pick(events, 'cpuUs').toFixed(0)} us (PostgreSQL's own work not included)`,
  );
}

async function start(name: string, entry: string, env: NodeJS.ProcessEnv): Promise<ServiceProcess> {
  return startServiceProcess({
    name,
    entry: join(root, entry),
    cwd: root,
    env,
    healthPath: '/health',
    timeoutMs: 120_000,
  });
}

async function benchBackend(
  label: string,
  serviceEnv: NodeJS.ProcessEnv,
  sqlEnv: NodeJS.ProcessEnv,
  work: string,
) {
  const token = await new SignJWT({})
    .setProtectedHeader({ alg: 'HS256' })
    .setSubject('bench-writer')
    .setExpirationTime('1h')
    .sign(new TextEncoder().encode(SECRET));
  const common = { LOG_LEVEL: 'warn', JWT_SECRET: SECRET, INIT_CWD: work };
  const mix = (mode: string) => ({
    MIX_MODE: mode,
    MIX_EVENTS: String(EVENTS),
    MIX_PAGES: String(PAGES),
    MIX_TOKEN: token,
  });
  const script = join(root, 'bench/mix.lua');
  const sqlAnchor = await start('sql-anchor', 'bench/sql-anchor-server.ts', sqlEnv);
  const api = await start(`events-${label}`, 'src/server.ts', { ...common, ...serviceEnv });
  try {
    const one = await (await fetch(`${api.url}/events/bench-5000`)).text();
    const list = await (await fetch(`${api.url}/events?limit=100`)).text();
    const bodies = join(work, `anchor-${label}.json`);
    await writeFile(bodies, `{"one":${one},"list":${list}}`);
    const constant = await start('anchor', 'bench/anchor-server.ts', { ANCHOR_BODIES: bodies });
    try {
      const oneConst = await wrk(`${constant.url}/one`);
      const one = await rounds(
        () => wrk(sqlAnchor.url, mix('one'), script, sqlAnchor.pid),
        () => wrk(api.url, mix('one'), script, api.pid),
      );
      line(label, 'GET one', oneConst, one.sql, one.events);
      const listConst = await wrk(`${constant.url}/list`);
      const list = await rounds(
        () => wrk(sqlAnchor.url, mix('list'), script, sqlAnchor.pid),
        () => wrk(api.url, mix('list'), script, api.pid),
      );
      line(label, 'GET list', listConst, list.sql, list.events);
    } finally {
      await constant.stop();
    }
  } finally {
    await api.stop();
    await sqlAnchor.stop();
  }
  // Page depth, every request reaching the database (read cache off).
  const nocache = await start(`events-${label}-nocache`, 'src/server.ts', {
    ...common,
    ...serviceEnv,
    READ_CACHE_MAX_ENTRIES: '0',
  });
  try {
    const first = await wrk(`${nocache.url}/events?limit=100&page=1`);
    const deepest = await wrk(`${nocache.url}/events?limit=100&page=${PAGES}`);
    const ratio = deepest.p99Ms / first.p99Ms;
    console.log(
      `${label.padEnd(9)} depth     | page 1 ${first.rps.toFixed(0)} rps p99 ${first.p99Ms.toFixed(1)} ms | ` +
        `page ${PAGES} ${deepest.rps.toFixed(0)} rps p99 ${deepest.p99Ms.toFixed(1)} ms | ` +
        `p99 ${ratio.toFixed(2)}x (target <= 2x) ${ratio <= 2 ? 'OK' : 'ABOVE'}`,
    );
  } finally {
    await nocache.stop();
  }
}

const work = await mkdtemp(join(tmpdir(), 'events-mix-'));
console.log(
  `${EVENTS} events, wrk -t1 -c${CONNECTIONS} -d${SECONDS}s per phase, ${ROUNDS} rounds per mix, 5% writes in the mixes`,
);
try {
  if (process.env.BENCH_SKIP_PGLITE === undefined) {
    const dir = join(work, 'pglite');
    await prepare(await createPgliteClient(join(dir, 'pgdata')));
    // PGlite is single-process: the bare-SQL anchor gets its own copy of the same data.
    await cp(join(dir, 'pgdata'), join(work, 'pglite-anchor'), { recursive: true });
    await benchBackend(
      'pglite',
      { DATA_DIR: dir, DATABASE_URL: '' },
      { PGLITE_DIR: join(work, 'pglite-anchor') },
      work,
    );
  }
  const db = await createTestDatabase('events_mix');
  try {
    await prepare(createPgClient({ url: db.url, poolMax: 2 }));
    await benchBackend('postgres', { DATABASE_URL: db.url }, { DATABASE_URL: db.url }, work);
  } finally {
    await db.drop();
  }
} finally {
  await rm(work, { recursive: true, force: true });
}
