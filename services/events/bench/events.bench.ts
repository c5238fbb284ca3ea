/**
 * Benchmark of `GET /events/{id}` and `GET /events?limit=100` on 10,000 events, against an anchor
 * measured in the same run: a bare Fastify route returning a constant JSON body of the same size.
 * Targets: at least 0.6x (one event) and 0.3x (a page of 100) of the anchor's requests per second.
 *
 *   npm run bench -w services/events              # PGlite and, when reachable, PostgreSQL
 *   BENCH_SECONDS=5 BENCH_CONNECTIONS=32 npm run bench -w services/events
 *
 * Rows: `pglite` and `postgres` with the default read cache (reads served from memory after the
 * first), and `pg-nocache` (READ_CACHE_MAX_ENTRIES=0) where every request queries PostgreSQL.
 *
 * `BENCH_METRICS=compare` instead measures what the metrics cost on the hottest path (cached
 * `GET /events/{id}` on PostgreSQL): the same server with metrics on (`METRICS_PORT=0`: per-route
 * counters and histogram) and off (`METRICS_PORT=off`), both loaded at once in each round
 * (`BENCH_ROUNDS`, default 8), and prints the median of the per-round ratios (target: on >= 0.97x off).
 * `BENCH_METRICS=same` runs the same comparison with metrics off on both sides: its noise floor.
 * Both servers run on core 0 (`taskset`), sharing it fairly whatever else the machine runs.
 *
 * Load comes from `wrk` (apt-get install -y wrk). Servers run as child processes so the load
 * generator and the servers do not share one event loop. Logs are at `warn` during the run.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { startServiceProcess } from '@platform/testkit/app';
import { pinToCore } from '@platform/testkit/cpu';
import { createTestDatabase } from '@platform/testkit/postgres';
import { migrate } from '../src/storage/migrations.js';
import { createPgClient } from '../src/storage/pg-client.js';
import { createPgliteClient } from '../src/storage/pglite-client.js';
import type { SqlClient } from '../src/storage/sql-client.js';
import { seedEvents } from './seed.js';

const run = promisify(execFile);
const root = resolve(import.meta.dirname, '..');
const SECONDS = Number(process.env.BENCH_SECONDS ?? 3);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 16);
const EVENTS = 10_000;
const ONE_ID = 'bench-5000';

interface Measure {
  rps: number;
  p99Ms: number;
}

/** Parses wrk's `Requests/sec` and the 99% line of `--latency`. */
async function wrk(url: string): Promise<Measure> {
  await run('wrk', ['-t1', `-c${CONNECTIONS}`, '-d1s', url]); // warm-up (JIT, pools, caches)
  const { stdout } = await run('wrk', ['-t1', `-c${CONNECTIONS}`, `-d${SECONDS}s`, '--latency', url]);
  const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(stdout)?.[1]);
  const p99 = /\s99%\s+([\d.]+)(us|ms|s)/.exec(stdout);
  if (!p99 || Number.isNaN(rps)) throw new Error(`unexpected wrk output:\n${stdout}`);
  const scale = p99[2] === 'us' ? 0.001 : p99[2] === 's' ? 1000 : 1;
  if (/Non-2xx/.test(stdout)) throw new Error(`non-2xx answers from ${url}:\n${stdout}`);
  return { rps, p99Ms: Number(p99[1]) * scale };
}

async function prepare(client: SqlClient): Promise<void> {
  await migrate(client);
  await seedEvents(client, EVENTS);
  await client.close();
}

async function benchBackend(label: string, env: NodeJS.ProcessEnv, work: string): Promise<void> {
  const common = {
    LOG_LEVEL: 'warn',
    JWT_SECRET: 'bench-secret-bench-secret-bench-secret!!',
    INIT_CWD: work,
  };
  const api = await startServiceProcess({
    name: `events-${label}`,
    entry: join(root, 'src/server.ts'),
    cwd: root,
    env: { ...common, ...env },
    healthPath: '/health',
    timeoutMs: 60_000,
  });
  try {
    const one = await (await fetch(`${api.url}/events/${ONE_ID}`)).text();
    const list = await (await fetch(`${api.url}/events?limit=100`)).text();
    const bodiesFile = join(work, `anchor-${label}.json`);
    await writeFile(bodiesFile, `{"one":${one},"list":${list}}`);
    const anchor = await startServiceProcess({
      name: 'anchor',
      entry: join(root, 'bench/anchor-server.ts'),
      cwd: root,
      env: { ANCHOR_BODIES: bodiesFile },
      healthPath: '/health',
    });
    try {
      const anchorOneSize = (await (await fetch(`${anchor.url}/one`)).text()).length;
      const anchorListSize = (await (await fetch(`${anchor.url}/list`)).text()).length;
      const rows = [
        [
          'GET /events/{id}',
          await wrk(`${anchor.url}/one`),
          await wrk(`${api.url}/events/${ONE_ID}`),
          0.6,
          one.length,
          anchorOneSize,
        ],
        [
          'GET /events?limit=100',
          await wrk(`${anchor.url}/list`),
          await wrk(`${api.url}/events?limit=100`),
          0.3,
          list.length,
          anchorListSize,
        ],
      ] as const;
      for (const [name, base, measured, target, size, anchorSize] of rows) {
        const ratio = measured.rps / base.rps;
        console.log(
          `${label.padEnd(10)} ${name.padEnd(22)} body ${String(size).padStart(6)} B (anchor ${anchorSize} B) | ` +
            `anchor ${base.rps.toFixed(0).padStart(6)} rps p99 ${base.p99Ms.toFixed(2)} ms | ` +
            `events ${measured.rps.toFixed(0).padStart(6)} rps p99 ${measured.p99Ms.toFixed(2)} ms | ` +
            `ratio ${ratio.toFixed(2)}x (target >= ${target}x) ${ratio >= target ? 'OK' : 'BELOW TARGET'}`,
        );
      }
    } finally {
      await anchor.stop();
    }
  } finally {
    await api.stop();
  }
}

/**
 * CPU seconds (user + system) used so far by `rootPid` and its children (the testkit's watchdog
 * shell and the node process under it), from Linux /proc at 100 ticks per second.
 */
async function cpuSeconds(rootPid: number): Promise<number> {
  const { readdir, readFile } = await import('node:fs/promises');
  let ticks = 0;
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = await readFile(`/proc/${entry}/stat`, 'utf8').catch(() => '');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // fields[1] is ppid, fields[11] utime, fields[12] stime (after pid and comm)
    if (Number(entry) === rootPid || Number(fields[1]) === rootPid) {
      ticks += Number(fields[11]) + Number(fields[12]);
    }
  }
  return ticks / 100;
}

/** Metrics on against metrics off, alternating rounds on one database (see the header). */
async function metricsCost(work: string): Promise<void> {
  const rounds = Number(process.env.BENCH_ROUNDS ?? 8);
  const db = await createTestDatabase('events_bench');
  try {
    await prepare(createPgClient({ url: db.url, poolMax: 2 }));
    const common = {
      LOG_LEVEL: 'warn',
      JWT_SECRET: 'bench-secret-bench-secret-bench-secret!!',
      INIT_CWD: work,
      DATABASE_URL: db.url,
    };
    const start = (metrics: string) =>
      startServiceProcess({
        name: `events-metrics-${metrics}`,
        entry: join(root, 'src/server.ts'),
        cwd: root,
        port: 0,
        env: { ...common, METRICS_PORT: metrics },
        healthPath: '/health',
        timeoutMs: 60_000,
      });
    // BENCH_METRICS=same: metrics off on both sides, the noise floor of the comparison (A/A).
    const same = process.env.BENCH_METRICS === 'same';
    const [on, off] = [await start(same ? 'off' : '0'), await start('off')];
    // Both servers on core 0: they share it fairly whatever else the machine runs on the other core
    // (unpinned, one of them could sit beside another user's job for a whole run).
    for (const server of [on, off]) if (server.pid !== undefined) pinToCore(server.pid, 0);
    try {
      const rates = { on: [] as number[], off: [] as number[] };
      // CPU per request of the server process: on a loaded machine requests per second follow the
      // scheduler more than the code; the CPU each request cost does not.
      const cpu = { on: [] as number[], off: [] as number[] };
      const measure = async (side: 'on' | 'off', url: string, pid: number | undefined) => {
        const before = pid === undefined ? 0 : await cpuSeconds(pid);
        const { rps } = await wrk(`${url}/events/${ONE_ID}`);
        const used = pid === undefined ? 0 : (await cpuSeconds(pid)) - before;
        rates[side].push(rps);
        // wrk's warm-up second is inside the CPU window: count its requests at the same rate.
        cpu[side].push((used * 1e6) / Math.max(1, rps * (SECONDS + 1)));
      };
      // Both servers loaded at once in every round: whatever else the shared machine runs slows both
      // alike and they share the cores, so the one whose requests cost more answers fewer. (One after
      // the other, neighbouring rounds moved by +-25%, more than the difference to decide.)
      const ratios: number[] = [];
      for (let round = 0; round < rounds; round += 1) {
        // Which wrk starts first alternates, so that neither side always starts second.
        const sides = [() => measure('on', on.url, on.pid), () => measure('off', off.url, off.pid)];
        await Promise.all((round % 2 === 0 ? sides : sides.reverse()).map((measureSide) => measureSide()));
        ratios.push((rates.on[round] as number) / (rates.off[round] as number));
      }
      const median = (values: number[]) =>
        [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;
      const ratio = median(ratios);
      console.log(
        `GET /events/{id} (cached, postgres), both servers loaded at once, metrics on ` +
          `${rates.on.map((r) => r.toFixed(0)).join(' ')} rps | off ${rates.off.map((r) => r.toFixed(0)).join(' ')} rps | ` +
          `per-round ratios ${ratios.map((r) => r.toFixed(3)).join(' ')} | median ${ratio.toFixed(3)}x ` +
          `(target >= 0.97x) ${ratio >= 0.97 ? 'OK' : 'BELOW TARGET'}`,
      );
      const cpuRatio = median(cpu.off) / median(cpu.on);
      console.log(
        `  CPU per request: on ${cpu.on.map((c) => c.toFixed(0)).join(' ')} us | off ` +
          `${cpu.off.map((c) => c.toFixed(0)).join(' ')} us | off/on ${cpuRatio.toFixed(3)}x`,
      );
    } finally {
      await Promise.all([on.stop(), off.stop()]);
    }
  } finally {
    await db.drop();
  }
}

const work = await mkdtemp(join(tmpdir(), 'events-bench-'));
if (process.env.BENCH_METRICS === 'compare' || process.env.BENCH_METRICS === 'same') {
  try {
    await metricsCost(work);
  } finally {
    await rm(work, { recursive: true, force: true });
  }
  process.exit(0);
}
console.log(`${EVENTS} events, wrk -t1 -c${CONNECTIONS} -d${SECONDS}s per phase (after a 1 s warm-up)`);
try {
  const pgliteDir = join(work, 'pglite');
  await prepare(await createPgliteClient(join(pgliteDir, 'pgdata')));
  await benchBackend('pglite', { DATA_DIR: pgliteDir, DATABASE_URL: '' }, work);

  let db: Awaited<ReturnType<typeof createTestDatabase>> | undefined;
  try {
    db = await createTestDatabase('events_bench');
  } catch (error) {
    console.log(`postgres skipped: ${error instanceof Error ? error.message : String(error)}`);
  }
  if (db !== undefined) {
    try {
      await prepare(createPgClient({ url: db.url, poolMax: 2 }));
      await benchBackend('postgres', { DATABASE_URL: db.url }, work);
      // The same without the read cache: every request reaches PostgreSQL.
      await benchBackend('pg-nocache', { DATABASE_URL: db.url, READ_CACHE_MAX_ENTRIES: '0' }, work);
    } finally {
      await db.drop();
    }
  }
} finally {
  await rm(work, { recursive: true, force: true });
}
