/**
 * End to end order entry on PostgreSQL: signed v3 order submissions (`/v3/auth/w/order/submit`)
 * over HTTP, each durable before its answer (group commit), against an anchor route on the same app,
 * database and concurrency that authenticates the same way and then does one INSERT + COMMIT per
 * request. For each concurrency, `--rounds` rounds of one phase of each side, alternated ABBA
 * (anchor first in even rounds, orders first in odd ones) so that a drift of the machine weighs on
 * both; the figure is the median of the rounds' ratios (each round's orders phase against its own
 * anchor phase), printed with their range, the machine's load, and the median CPU per request of
 * server + PostgreSQL on each side, which depends far less on what else runs here (issue 46: two runs
 * of the former best-of-two-phases said 0.78x and 1.66x minutes apart). Needs PostgreSQL
 * (DATABASE_URL or the testkit default 127.0.0.1:5432).
 *
 *   npm run bench:e2e -w services/exchange [-- --concurrency 32,128 --rounds 6 --seconds 3 --pool 10 --depth 1
 *                                             --database exchange_bench]
 *
 * `--database` is the prefix of the throw-away database's name. On a server that preloads
 * `pg_stat_statements` (a server of one's own: README, Benchmark) it also prints, per concurrency,
 * what PostgreSQL did per order and per anchor request: statements, rows, execution time and WAL.
 * PostgreSQL's CPU is that of the bench's server only (its postmaster and children) when its
 * postmaster.pid can be read here, otherwise every `postgres` process of the machine.
 *
 * `--depth` is ORDER_PIPELINE_DEPTH: order batch statements in flight at once.
 *
 * `--metrics-compare [--rounds 8 --seconds 2]` instead measures what the metrics cost on order entry:
 * two apps built side by side, with and without a metrics registry, in ABBA rounds (bench/metrics-cost.ts).
 *
 * Besides requests per second it prints the CPU time each request cost the server process, the
 * PostgreSQL backends and the load generator (its own process), since on a small machine the phases
 * compete for the same cores and the CPU per request is what decides the ratio.
 */

import { readdirSync, readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { listenOnFreePort } from '@platform/testkit/app';
import { buildApp } from '../src/app.js';
import { v3Auth } from '../src/auth/authenticate.js';
import { ApiKeyCache } from '../src/auth/key-cache.js';
import { reconcile } from '../src/ledger/reconcile.js';
import { compareMetricsCost } from './metrics-cost.js';
import { openBenchDatabase } from './support/database.js';
import { fundedKeys } from './support/keys.js';
import { numberOption, stringOption } from './support/options.js';
import { type OrderLoadResult, runOrderLoad } from './support/order-load.js';
import { openPgStats, type PhaseStatements, postmasterPid } from './support/pg-stats.js';

const concurrencies = stringOption('concurrency', '32,128').split(',').map(Number);
const concurrency = Math.max(...concurrencies);
const rounds = numberOption('rounds', 6);
const seconds = numberOption('seconds', 3);
const poolSize = numberOption('pool', 10);
const depth = numberOption('depth', 1);
const databasePrefix = stringOption('database', 'exchange_bench');

type Result = OrderLoadResult;

/**
 * CPU seconds used so far by every PostgreSQL process of this machine (Linux /proc, 100 ticks/s),
 * with the time of its children that ended (a backend that exits moves its time to the postmaster's
 * cutime/cstime; without them the sum went down, a negative CPU per request, when one ended).
 * With `postmaster`, only that server's processes (its own pid and its children's).
 */
function postgresCpuSeconds(postmaster?: number): number {
  let ticks = 0;
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const close = stat.lastIndexOf(')');
      if (!stat.slice(stat.indexOf('(') + 1, close).startsWith('postgres')) continue;
      const fields = stat.slice(close + 2).split(' ');
      // fields[1] is the parent's pid.
      if (postmaster !== undefined && Number(pid) !== postmaster && Number(fields[1]) !== postmaster)
        continue;
      ticks += Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14]);
    } catch {
      // The process ended while we read it.
    }
  }
  return ticks / 100;
}

interface PhaseCpu {
  server: number;
  postgres: number;
  client: number;
}

if (process.argv.includes('--metrics-compare')) {
  await compareMetricsCost({
    concurrency,
    seconds: numberOption('seconds', 3),
    rounds: numberOption('rounds', 8),
    poolSize,
    depth,
    asyncCommit: !process.argv.includes('--sync-commit'),
    same: process.argv.includes('--same'),
    pin: process.argv.includes('--no-pin') ? undefined : numberOption('pin', 0),
  });
  process.exit(0);
}

const bench = await openBenchDatabase(databasePrefix, poolSize);
const { db, reference, secretBox } = bench;
const postmaster = await postmasterPid(bench.url);
const pgStats = await openPgStats(bench.url);
try {
  await db.query(
    'CREATE TABLE bench_anchor (id bigserial PRIMARY KEY, account_id int NOT NULL, body text NOT NULL)',
  );
  const keys = await fundedKeys(db, secretBox, concurrency * 2, 'bench');
  const app = await buildApp({ db, reference, secretBox, orderPipelineDepth: depth });
  const auth = { db, secretBox, now: Date.now, nonceWindowMs: 300_000, keys: new ApiKeyCache() };
  // The anchor: the same authentication as the order route, then one INSERT and its COMMIT. The
  // request's nonce is recorded by that same statement (as the order route records it in its batch),
  // so the anchor pays one commit per request, not two.
  app.post(
    '/bench/anchor',
    { preValidation: v3Auth(auth, 'trade', { deferNonce: true }) },
    async (request, reply) => {
      const nonce = request.deferredNonce!;
      const { rows } = await db.query(
        `WITH k AS (
           UPDATE api_keys SET last_nonce_v3 = $2, last_used_at = now()
            WHERE id = $1 AND last_nonce_v3 < $2 AND enabled AND revoked_at IS NULL RETURNING id)
         INSERT INTO bench_anchor (account_id, body) SELECT $3, $4 FROM k RETURNING id`,
        [nonce.keyId, nonce.value, request.auth!.accountId, JSON.stringify(request.body)],
      );
      nonce.consumed = true;
      if (rows.length === 0) return reply.code(401).send({ error: 'nonce reused or key disabled' });
      return { ok: true };
    },
  );
  const server = await listenOnFreePort(app);
  // Each phase gets its own keys half so that nonces from one phase never trail another's.
  const phase = async (
    kind: 'order' | 'anchor',
    clients: number,
    ms: number,
  ): Promise<Result & { cpu: PhaseCpu; statements?: PhaseStatements }> => {
    await pgStats?.begin();
    const serverStart = process.cpuUsage();
    const postgresStart = postgresCpuSeconds(postmaster);
    const result = await runOrderLoad(
      server.url,
      kind === 'order' ? '/v3/auth/w/order/submit' : '/bench/anchor',
      kind === 'order' ? keys.slice(0, clients) : keys.slice(concurrency, concurrency + clients),
      ms,
    );
    const server_ = process.cpuUsage(serverStart);
    const postgresEnd = postgresCpuSeconds(postmaster);
    const statements = await pgStats?.end();
    const perRequest = (seconds: number) => (seconds * 1e6) / Math.max(1, result.requests);
    return {
      ...result,
      cpu: {
        server: perRequest((server_.user + server_.system) / 1e6),
        postgres: perRequest(postgresEnd - postgresStart),
        client: perRequest(result.cpuSeconds),
      },
      ...(statements ? { statements } : {}),
    };
  };
  /** Per answered request of the phases: each statement's calls, rows, execution µs and WAL bytes. */
  const showStatements = (label: string, phases: readonly (Result & { statements?: PhaseStatements })[]) => {
    const requests = phases.reduce((sum, r) => sum + r.requests, 0);
    if (requests === 0 || phases.some((r) => !r.statements)) return;
    const byQuery = new Map<
      string,
      { calls: number; rows: number; execMs: number; wal: number; fpi: number }
    >();
    let serverWal = 0;
    for (const r of phases) {
      serverWal += r.statements!.serverWalBytes;
      for (const s of r.statements!.statements) {
        const key = s.query.replace(/\s+/g, ' ').slice(0, 90);
        const sum = byQuery.get(key) ?? { calls: 0, rows: 0, execMs: 0, wal: 0, fpi: 0 };
        sum.calls += s.calls;
        sum.rows += s.rows;
        sum.execMs += s.execMs;
        sum.wal += s.walBytes;
        sum.fpi += s.walFpi;
        byQuery.set(key, sum);
      }
    }
    const total = [...byQuery.values()].reduce(
      (sum, s) => ({ calls: sum.calls + s.calls, execMs: sum.execMs + s.execMs, wal: sum.wal + s.wal }),
      { calls: 0, execMs: 0, wal: 0 },
    );
    console.log(
      `  ${label}, PostgreSQL per request (${requests} requests): ${(total.calls / requests).toFixed(3)} statements, ` +
        `${((total.execMs * 1000) / requests).toFixed(1)} µs executing, WAL ${(total.wal / requests).toFixed(0)} B by statements, ` +
        `${(serverWal / requests).toFixed(0)} B by the server`,
    );
    for (const [query, s] of [...byQuery.entries()].sort(([, a], [, b]) => b.execMs - a.execMs).slice(0, 6))
      console.log(
        `    calls/req ${(s.calls / requests).toFixed(3)}  rows/call ${(s.rows / Math.max(1, s.calls)).toFixed(1)}  ` +
          `µs/req ${((s.execMs * 1000) / requests).toFixed(1)}  µs/call ${((s.execMs * 1000) / Math.max(1, s.calls)).toFixed(0)}  ` +
          `WAL B/req ${(s.wal / requests).toFixed(0)} (FPI/req ${(s.fpi / requests).toFixed(3)})  ${query}`,
      );
  };
  const show = (label: string, r: Result & { cpu: PhaseCpu }) =>
    console.log(
      `  ${label.padEnd(34)} ${r.perSecond.toFixed(0).padStart(7)} req/s  p50 ${r.p50.toFixed(1).padStart(6)} ms  p99 ${r.p99.toFixed(1).padStart(6)} ms  errors ${r.errors}  ` +
        `CPU µs/req: server ${r.cpu.server.toFixed(0)}, PostgreSQL ${r.cpu.postgres.toFixed(0)}, client ${r.cpu.client.toFixed(0)}`,
    );
  const median = (list: readonly number[]) => {
    const sorted = [...list].sort((x, y) => x - y);
    const middle = Math.floor(sorted.length / 2);
    return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
  };
  const load = () =>
    loadavg()
      .map((n) => n.toFixed(1))
      .join(' ');
  const targets: Record<number, number> = { 32: 2, 128: 2.5 };
  console.log(
    `PostgreSQL, pool ${poolSize}, ${depth} order batch(es) in flight, ${rounds} rounds of ${seconds} s per side, load ${load()}; ` +
      `PostgreSQL CPU of ${postmaster === undefined ? 'every postgres process' : `the server of postmaster ${postmaster}`}` +
      `${pgStats ? ', pg_stat_statements on' : ''}`,
  );
  const summary: string[] = [];
  for (const clients of concurrencies) {
    console.log(`concurrency ${clients}`);
    await phase('anchor', clients, 1_000);
    await phase('order', clients, 1_000);
    const anchors: (Result & { cpu: PhaseCpu; statements?: PhaseStatements })[] = [];
    const orders: (Result & { cpu: PhaseCpu; statements?: PhaseStatements })[] = [];
    const ratios: number[] = [];
    for (let round = 0; round < rounds; round += 1) {
      const sides = round % 2 === 0 ? (['anchor', 'order'] as const) : (['order', 'anchor'] as const);
      const measured: Partial<
        Record<'anchor' | 'order', Result & { cpu: PhaseCpu; statements?: PhaseStatements }>
      > = {};
      for (const side of sides) {
        const r = await phase(side, clients, seconds * 1000);
        show(side === 'anchor' ? 'anchor: auth + INSERT + COMMIT' : 'orders: auth + match + group commit', r);
        measured[side] = r;
      }
      anchors.push(measured.anchor!);
      orders.push(measured.order!);
      ratios.push(measured.order!.perSecond / measured.anchor!.perSecond);
    }
    const cpu = (list: readonly (Result & { cpu: PhaseCpu })[]) =>
      median(list.map((r) => r.cpu.server + r.cpu.postgres));
    const target = targets[clients];
    const line =
      `concurrency ${clients}: orders/anchor median of ${rounds} rounds ${median(ratios).toFixed(2)}x ` +
      `(rounds ${Math.min(...ratios).toFixed(2)}-${Math.max(...ratios).toFixed(2)}x${target ? `; target ${target}x` : ''}); ` +
      `median req/s ${median(orders.map((r) => r.perSecond)).toFixed(0)} / ${median(anchors.map((r) => r.perSecond)).toFixed(0)}; ` +
      `CPU per request, server + PostgreSQL: ${cpu(orders).toFixed(0)} / ${cpu(anchors).toFixed(0)} µs = ` +
      `${(cpu(anchors) / cpu(orders)).toFixed(2)}x fewer for orders (server alone ` +
      `${median(orders.map((r) => r.cpu.server)).toFixed(0)} / ${median(anchors.map((r) => r.cpu.server)).toFixed(0)} µs); ` +
      `p99 ${median(orders.map((r) => r.p99)).toFixed(1)} / ${median(anchors.map((r) => r.p99)).toFixed(1)} ms; load ${load()}`;
    console.log(`  ${line}`);
    showStatements('orders', orders);
    showStatements('anchor', anchors);
    summary.push(line);
  }
  console.log('\nsummary');
  for (const line of summary) console.log(`  ${line}`);
  const trades = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM trades');
  const report = await reconcile(db);
  console.log(
    `  trades ${trades.rows[0]!.n}, ledger reconciliation ${report.ok ? 'ok' : report.problems.join('; ')}`,
  );
  await server.close();
} finally {
  await pgStats?.close();
  await bench.close();
}
