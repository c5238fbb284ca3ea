/**
 * End to end order entry on PostgreSQL: signed v3 order submissions (`/v3/auth/w/order/submit`)
 * over HTTP, each durable before its answer (group commit), against an anchor route on the same app,
 * database and concurrency that authenticates the same way and then does one INSERT + COMMIT per
 * request. Phases alternate (anchor, orders, anchor, orders) for a few seconds each; the ratio is the
 * best orders phase against the best anchor phase (the machine's noise moves rates by a third between
 * phases; the best of each is the least disturbed). Needs PostgreSQL (DATABASE_URL or the testkit default 127.0.0.1:5432).
 *
 *   npm run bench:e2e -w services/exchange [-- --concurrency 32 --seconds 3 --pool 10 --depth 1]
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
import { listenOnFreePort } from '@platform/testkit/app';
import { buildApp } from '../src/app.js';
import { v3Auth } from '../src/auth/authenticate.js';
import { ApiKeyCache } from '../src/auth/key-cache.js';
import { reconcile } from '../src/ledger/reconcile.js';
import { compareMetricsCost } from './metrics-cost.js';
import { openBenchDatabase } from './support/database.js';
import { fundedKeys } from './support/keys.js';
import { numberOption } from './support/options.js';
import { type OrderLoadResult, runOrderLoad } from './support/order-load.js';

const concurrency = numberOption('concurrency', 32);
const seconds = numberOption('seconds', 3);
const poolSize = numberOption('pool', 10);
const depth = numberOption('depth', 1);

type Result = OrderLoadResult;

/** CPU seconds used so far by every PostgreSQL process of this machine (Linux /proc, 100 ticks/s). */
function postgresCpuSeconds(): number {
  let ticks = 0;
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const close = stat.lastIndexOf(')');
      if (!stat.slice(stat.indexOf('(') + 1, close).startsWith('postgres')) continue;
      const fields = stat.slice(close + 2).split(' ');
      ticks += Number(fields[11]) + Number(fields[12]);
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

const bench = await openBenchDatabase('exchange_bench', poolSize);
const { db, reference, secretBox } = bench;
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
  const phase = async (kind: 'order' | 'anchor', ms: number): Promise<Result & { cpu: PhaseCpu }> => {
    const serverStart = process.cpuUsage();
    const postgresStart = postgresCpuSeconds();
    const result = await runOrderLoad(
      server.url,
      kind === 'order' ? '/v3/auth/w/order/submit' : '/bench/anchor',
      kind === 'order' ? keys.slice(0, concurrency) : keys.slice(concurrency),
      ms,
    );
    const server_ = process.cpuUsage(serverStart);
    const perRequest = (seconds: number) => (seconds * 1e6) / Math.max(1, result.requests);
    return {
      ...result,
      cpu: {
        server: perRequest((server_.user + server_.system) / 1e6),
        postgres: perRequest(postgresCpuSeconds() - postgresStart),
        client: perRequest(result.cpuSeconds),
      },
    };
  };
  const show = (label: string, r: Result & { cpu: PhaseCpu }) =>
    console.log(
      `  ${label.padEnd(34)} ${r.perSecond.toFixed(0).padStart(7)} req/s  p50 ${r.p50.toFixed(1).padStart(6)} ms  p99 ${r.p99.toFixed(1).padStart(6)} ms  errors ${r.errors}  ` +
        `CPU µs/req: server ${r.cpu.server.toFixed(0)}, PostgreSQL ${r.cpu.postgres.toFixed(0)}, client ${r.cpu.client.toFixed(0)}`,
    );
  console.log(
    `PostgreSQL, concurrency ${concurrency}, pool ${poolSize}, ${depth} order batch(es) in flight, ${seconds} s per phase`,
  );
  await phase('anchor', 1_000);
  await phase('order', 1_000);
  const anchors: Result[] = [];
  const orders: Result[] = [];
  for (let round = 0; round < 2; round += 1) {
    const a = await phase('anchor', seconds * 1000);
    show('anchor: auth + INSERT + COMMIT', a);
    anchors.push(a);
    const o = await phase('order', seconds * 1000);
    show('orders: auth + match + group commit', o);
    orders.push(o);
  }
  const median = (list: Result[], f: (r: Result) => number) =>
    list.map(f).sort((x, y) => x - y)[Math.floor(list.length / 2)]!;
  const ratio = Math.max(...orders.map((r) => r.perSecond)) / Math.max(...anchors.map((r) => r.perSecond));
  console.log(`  ratio orders/anchor (best of each)  ${ratio.toFixed(2)}x  (target 1.5x)`);
  console.log(
    `  p99 orders ${median(orders, (r) => r.p99).toFixed(1)} ms, anchor ${median(anchors, (r) => r.p99).toFixed(1)} ms`,
  );
  const trades = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM trades');
  const report = await reconcile(db);
  console.log(
    `  trades ${trades.rows[0]!.n}, ledger reconciliation ${report.ok ? 'ok' : report.problems.join('; ')}`,
  );
  await server.close();
} finally {
  await bench.close();
}
