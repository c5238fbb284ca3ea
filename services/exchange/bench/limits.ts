/**
 * What request limits cost a request: `GET /v3/timestamp` (the cheapest route, so the limiter's share
 * is the largest it can be) over real HTTP, driven by wrk, on four apps in this process, over one
 * PostgreSQL database (DATABASE_URL or the testkit default 127.0.0.1:5432):
 *   anchor      no limits (`buildApp` without `limits`),
 *   in-process  the in-process limiter (`RATE_LIMITS_STORE=memory`),
 *   database    the database's counters (`RATE_LIMITS_STORE=database`, shared by a cluster's nodes),
 *   grpc        services/ratelimit over gRPC (a real child process, in-process store).
 * The limits are so high that nothing is refused: the figures are the cost of counting. Phases
 * alternate (anchor, in-process, grpc, anchor, ...); each figure is the best of its phases (the least
 * disturbed on a shared machine). Also printed: this process's CPU time per request (the exchange's;
 * the ratelimit process's own CPU is not in it) and that of this database's PostgreSQL backends
 * (read from /proc by their pids: the server is shared, other databases' work is not counted).
 *
 *   npx tsx bench/limits.ts [--seconds 4 --rounds 3 --connections 32]     (needs wrk)
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { listenOnFreePort, type RunningApp } from '@platform/testkit/app';
import { cpuMicros } from '@platform/testkit/cpu';
import { buildApp } from '../src/app.js';
import { DatabaseLimiter } from '../src/limits/database-limiter.js';
import { GrpcLimiter } from '../src/limits/grpc-limiter.js';
import { parseLimits } from '../src/limits/limits-file.js';
import { MemoryLimiter } from '../src/limits/memory-limiter.js';
import { ratelimitConfigYaml } from '../src/limits/ratelimit-config.js';
import { startRatelimit } from '../test/limits/ratelimit-process.js';
import { openBenchDatabase } from './support/database.js';
import { numberOption } from './support/options.js';

const run = promisify(execFile);
const seconds = numberOption('seconds', 4);
const rounds = numberOption('rounds', 3);
const connections = numberOption('connections', 32);

const parsed = parseLimits(`
domain: exchange-bench
rules:
  - { name: public-address, routes: public, per: address, unit: second, requests_per_unit: 1000000000 }
`);
if (!parsed.ok) throw new Error(parsed.error);
const limits = parsed.config;

const bench = await openBenchDatabase('exchange_bench_limits');
const { db, reference, secretBox } = bench;
const ratelimit = await startRatelimit(ratelimitConfigYaml(limits, 'the bench rules'));

const variants: { name: string; server: RunningApp }[] = [];
for (const [name, limiter] of [
  ['anchor', undefined],
  ['in-process', new MemoryLimiter()],
  ['database', new DatabaseLimiter(db)],
  ['grpc', new GrpcLimiter({ target: ratelimit.grpc, domain: limits.domain, timeoutMs: 1_000 })],
] as const) {
  const app = await buildApp({
    db,
    reference,
    secretBox,
    ...(limiter ? { limits: { config: limits, limiter, failureMode: 'closed' as const } } : {}),
  });
  variants.push({ name, server: await listenOnFreePort(app) });
}

interface Phase {
  readonly rate: number;
  readonly cpuMicros: number;
  /** CPU of this bench database's PostgreSQL backends per request (what the database limiter adds there). */
  readonly postgresMicros: number;
}

/** The PostgreSQL backends serving this bench's database (its pool's connections), not other users'. */
async function backends(): Promise<number[]> {
  const { rows } = await db.query<{ pid: number }>(
    'SELECT pid FROM pg_stat_activity WHERE datname = current_database()',
  );
  return rows.map((row) => row.pid);
}
const phases = new Map<string, Phase[]>(variants.map((v) => [v.name, []]));

async function phase(url: string): Promise<Phase> {
  const pids = await backends();
  const postgresStart = pids.map((pid) => cpuMicros([pid]));
  const cpu = process.cpuUsage();
  const { stdout } = await run('wrk', ['-t1', `-c${connections}`, `-d${seconds}s`, `${url}/v3/timestamp`]);
  const used = process.cpuUsage(cpu);
  // A connection the pool closed during the phase (idle) reads 0 at the end: left out, not negative.
  const postgresUsed = pids.reduce((sum, pid, i) => {
    const end = cpuMicros([pid]);
    return end === 0 ? sum : sum + end - (postgresStart[i] as number);
  }, 0);
  const rate = Number(/Requests\/sec:\s+([\d.]+)/.exec(stdout)?.[1]);
  const total = Number(/(\d+) requests in/.exec(stdout)?.[1]);
  const bad = /Non-2xx or 3xx responses: (\d+)/.exec(stdout)?.[1];
  if (bad) throw new Error(`${bad} answers were not 200 (refused or failed): the figures would be wrong`);
  return { rate, cpuMicros: (used.user + used.system) / total, postgresMicros: postgresUsed / total };
}

for (const v of variants) await phase(v.server.url); // warm-up (JIT, gRPC connection)
for (let round = 0; round < rounds; round++) {
  for (const v of variants) phases.get(v.name)!.push(await phase(v.server.url));
}

const best = (name: string): Phase => {
  const list = phases.get(name)!;
  return {
    rate: Math.max(...list.map((p) => p.rate)),
    cpuMicros: Math.min(...list.map((p) => p.cpuMicros)),
    postgresMicros: Math.min(...list.map((p) => p.postgresMicros)),
  };
};
const anchor = best('anchor');
console.log(
  `GET /v3/timestamp, wrk ${connections} connections, ${rounds} x ${seconds} s per variant, best phase of each`,
);
for (const v of variants) {
  const b = best(v.name);
  console.log(
    `${v.name.padEnd(11)} ${b.rate.toFixed(0).padStart(7)} req/s  ${(b.rate / anchor.rate).toFixed(2)}x anchor` +
      `   exchange CPU ${b.cpuMicros.toFixed(1)} µs/req  ${(b.cpuMicros / anchor.cpuMicros).toFixed(2)}x anchor` +
      `   PostgreSQL CPU ${b.postgresMicros.toFixed(1)} µs/req` +
      `   (phases: ${phases
        .get(v.name)!
        .map((p) => p.rate.toFixed(0))
        .join(', ')})`,
  );
}

for (const v of variants) await v.server.close();
await ratelimit.stop();
await bench.close();
