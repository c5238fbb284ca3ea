/**
 * Merchant-facing throughput of the gateway, each against an anchor measured in the same run, at
 * BENCH_CLIENTS concurrent clients (default 32), on PostgreSQL:
 *
 * 1. Invoices created per second: `POST /public-api/payment-invoices` (with an Idempotency-Key) vs a
 *    bare Fastify route doing the same INSERTs and COMMIT through the same storage (anchor-server.ts).
 * 2. Callbacks delivered per second: BENCH_CALLBACKS callbacks waiting in the outbox, delivered by the
 *    gateway's background loop (CALLBACK_CONCURRENCY = clients) to a bare receiver, vs the same
 *    bodies posted, signed, straight to that receiver by 32 client loops of this process.
 *
 * CPU per operation is the servers' user + system time (/proc) divided by the operations. Goal: each
 * ratio >= 0.7x.
 *
 *   npm run bench -w services/paygate
 *   BENCH_SECONDS=5 BENCH_CALLBACKS=4000 npm run bench -w services/paygate
 *   BENCH_PHASES=callbacks BENCH_CPU_PROF=/tmp/prof npm run bench -w services/paygate
 *
 * BENCH_ROUNDS (3): invoice phases alternate anchor and gateway this many times. BENCH_PHASES
 * (`invoices,callbacks`) picks the phases; BENCH_CPU_PROF=<dir> runs the measured
 * gateway under `--cpu-prof` and leaves its .cpuprofile there (open it in Chrome's DevTools).
 */
import { createHmac, randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { startServiceProcess } from '@platform/testkit/app';
import { cpuMicros, processTree } from '@platform/testkit/cpu';
import { createTestDatabase } from '@platform/testkit/postgres';
import pg from 'pg';
import { openStorage } from '../src/db/open.js';
import { bundledYaml } from '../test/support/catalog.js';
import { signed } from '../test/support/invoice-form.js';

const root = resolve(import.meta.dirname, '..');
const SECONDS = Number(process.env.BENCH_SECONDS ?? 3);
const CLIENTS = Number(process.env.BENCH_CLIENTS ?? 32);
const CALLBACKS = Number(process.env.BENCH_CALLBACKS ?? 2_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const SECRET = 'sandbox-exchange-secret';
const PHASES = new Set((process.env.BENCH_PHASES ?? 'invoices,callbacks').split(','));
const CPU_PROF = process.env.BENCH_CPU_PROF;

interface Phase {
  ops: number;
  seconds: number;
  cpuUsPerOp: number;
}

/** `CLIENTS` loops calling `once` until `SECONDS` pass; ops, time and the servers' CPU per op. */
async function closedLoop(pids: number[], once: () => Promise<void>): Promise<Phase> {
  const cpu0 = cpuMicros(pids);
  const start = performance.now();
  const stopAt = start + SECONDS * 1000;
  let ops = 0;
  await Promise.all(
    Array.from({ length: CLIENTS }, async () => {
      while (performance.now() < stopAt) {
        await once();
        ops += 1;
      }
    }),
  );
  const seconds = (performance.now() - start) / 1000;
  return { ops, seconds, cpuUsPerOp: (cpuMicros(pids) - cpu0) / ops };
}

/** Phases added up: all their operations over all their time, CPU per operation over all. */
function sum(phases: Phase[]): Phase {
  const ops = phases.reduce((n, p) => n + p.ops, 0);
  return {
    ops,
    seconds: phases.reduce((n, p) => n + p.seconds, 0),
    cpuUsPerOp: phases.reduce((n, p) => n + p.cpuUsPerOp * p.ops, 0) / ops,
  };
}

async function post(url: string, body: string, headers: Record<string, string> = {}): Promise<void> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body,
  });
  await response.arrayBuffer();
  if (response.status >= 300) throw new Error(`${url}: HTTP ${response.status}`);
}

function line(name: string, anchor: Phase, measured: Phase): void {
  const rate = (p: Phase) => p.ops / p.seconds;
  const ratio = rate(measured) / rate(anchor);
  console.log(
    `${name.padEnd(22)} | anchor ${rate(anchor).toFixed(0).padStart(6)}/s ${anchor.cpuUsPerOp.toFixed(0).padStart(5)} us CPU/op | ` +
      `paygate ${rate(measured).toFixed(0).padStart(6)}/s ${measured.cpuUsPerOp.toFixed(0).padStart(5)} us CPU/op | ` +
      `ratio ${ratio.toFixed(2)}x (goal >= 0.7x) ${ratio >= 0.7 ? 'OK' : 'BELOW GOAL'}`,
  );
}

const work = await mkdtemp(join(tmpdir(), 'paygate-bench-'));
const gatewayDb = await createTestDatabase('paygate_bench');
const anchorDb = await createTestDatabase('paygate_bench_anchor');
const receiver = await startServiceProcess({
  name: 'bare-receiver',
  entry: join(root, 'bench/bare-receiver.ts'),
  cwd: root,
  healthPath: '/health',
});
const config = join(work, 'gateway.yaml');
await writeFile(config, bundledYaml({ callbackUrl: `${receiver.url}/callback` }));
const gatewayEnv = {
  DATABASE_URL: gatewayDb.url,
  PAYGATE_CONFIG: config,
  PUBLIC_URL: '',
  LOG_LEVEL: 'warn',
  CALLBACK_CONCURRENCY: String(CLIENTS),
  // The bench signs with the catalog's sandbox secret, refused with DATABASE_URL set unless told.
  ALLOW_SANDBOX_SECRETS: 'true',
  // --cpu-prof is refused in NODE_OPTIONS: a module started before the server profiles instead.
  ...(CPU_PROF
    ? { NODE_OPTIONS: `--import=${join(root, 'bench/cpu-profile.mjs')}`, BENCH_CPU_PROF_DIR: CPU_PROF }
    : {}),
};
// The gateway's schema, so that the callbacks phase can fill the outbox before its gateway starts.
await (await openStorage({ kind: 'postgres', url: gatewayDb.url, poolSize: 1 })).close();
console.log(`PostgreSQL, ${CLIENTS} clients, ${SECONDS} s per phase (after a 1 s warm-up)`);
try {
  // 1. Invoices: the background loop idles (every 60 s) so only creation is measured.
  if (PHASES.has('invoices')) {
    const gateway = await startServiceProcess({
      name: 'paygate',
      entry: join(root, 'src/server.ts'),
      cwd: root,
      env: { ...gatewayEnv, WORKER_INTERVAL_MS: '60000' },
      healthPath: '/health',
      timeoutMs: 60_000,
    });
    const anchor = await startServiceProcess({
      name: 'anchor',
      entry: join(root, 'bench/anchor-server.ts'),
      cwd: root,
      env: { DATABASE_URL: anchorDb.url, MERCHANT_SECRET: SECRET },
      healthPath: '/health',
      timeoutMs: 60_000,
    });
    try {
      // The anchor's database needs the schema: the gateway's migrations, run by opening it once.
      // Both get the same form signed by the merchant (README "Signed invoice forms"), so each
      // measured request is a real creation, never a 401.
      const invoice = (reference: string) =>
        JSON.stringify(
          signed(
            {
              public_key: 'pk_test_exchange_uah',
              reference_id: reference,
              service: 'payment_card_uah_hpp',
              currency: 'UAH',
              amount: '500',
            },
            { secret: SECRET },
          ),
        );
      const gatewayOnce = () =>
        post(`${gateway.url}/public-api/payment-invoices`, invoice(randomUUID()), {
          'idempotency-key': randomUUID(),
        });
      const anchorOnce = () => post(`${anchor.url}/invoices`, invoice(randomUUID()));
      const warm = async (once: () => Promise<void>) => {
        const until = performance.now() + 1000;
        await Promise.all(
          Array.from({ length: CLIENTS }, async () => {
            while (performance.now() < until) await once();
          }),
        );
      };
      await warm(anchorOnce);
      await warm(gatewayOnce);
      // Anchor and gateway alternate for ROUNDS rounds: on a shared machine the load moves within
      // seconds, and one phase of each, one after the other, gave 0.83x and 0.40x a minute apart.
      const anchorPids = processTree(anchor.pid as number);
      const gatewayPids = processTree(gateway.pid as number);
      const rounds: [Phase, Phase][] = [];
      for (let round = 0; round < ROUNDS; round += 1) {
        rounds.push([await closedLoop(anchorPids, anchorOnce), await closedLoop(gatewayPids, gatewayOnce)]);
      }
      const ratios = rounds.map(([a, g]) => g.ops / g.seconds / (a.ops / a.seconds)).sort((x, y) => x - y);
      line('invoices created', sum(rounds.map(([a]) => a)), sum(rounds.map(([, g]) => g)));
      console.log(
        `(invoices: ${ROUNDS} alternating rounds of ${SECONDS} s; ratio per round ${ratios.map((r) => r.toFixed(2)).join(', ')})`,
      );
    } finally {
      await anchor.stop();
      await gateway.stop();
    }
  }

  // 2. Callbacks: CALLBACKS events of distinct objects waiting in the outbox, all due.
  if (PHASES.has('callbacks')) {
    const db = new pg.Client({ connectionString: gatewayDb.url });
    await db.connect();
    await db.query('DELETE FROM callback_outbox');
    const bodies: string[] = [];
    for (let i = 0; i < CALLBACKS; i += 1) {
      const id = `inv_bench${String(i).padStart(15, '0')}`;
      bodies.push(
        JSON.stringify({
          event_id: `${id}:created`,
          object: 'invoice',
          id,
          reference_id: `bench-${i}`,
          status: 'created',
          currency: 'UAH',
          amount: '500.00',
          fee: '7.50',
          service: 'payment_card_uah_hpp',
          test_mode: true,
          occurred_at: new Date().toISOString(),
          failure_reason: null,
          sequence: 1,
        }),
      );
    }
    // The anchor: the same signed bodies straight to the receiver.
    let next = 0;
    const cpu0 = cpuMicros(processTree(receiver.pid as number));
    const start = performance.now();
    await Promise.all(
      Array.from({ length: CLIENTS }, async () => {
        for (let i = next++; i < bodies.length; i = next++) {
          const body = bodies[i] ?? '';
          const timestamp = Math.floor(Date.now() / 1000);
          await post(`${receiver.url}/callback`, body, {
            'x-paygate-merchant': 'exchange',
            'x-paygate-timestamp': String(timestamp),
            'x-paygate-signature': createHmac('sha256', SECRET).update(`${timestamp}.${body}`).digest('hex'),
          });
        }
      }),
    );
    const anchorSeconds = (performance.now() - start) / 1000;
    const anchorPhase: Phase = {
      ops: bodies.length,
      seconds: anchorSeconds,
      cpuUsPerOp: (cpuMicros(processTree(receiver.pid as number)) - cpu0) / bodies.length,
    };
    // Written not yet due, so the gateway's start-up delivers nothing before its CPU is counted, and
    // with their positions (the events API's) given, as a backlog's events have had for long.
    const now = new Date().toISOString();
    const later = '2100-01-01T00:00:00Z';
    for (let i = 0; i < bodies.length; i += 500) {
      const chunk = bodies.slice(i, i + 500);
      const values = chunk.map(
        (_, j) =>
          `($${j * 3 + 1}, 'exchange', 'invoice', $${j * 3 + 2}, $${j * 3 + 3}, 1, '${later}', '${now}', nextval('callback_position'))`,
      );
      await db.query(
        `INSERT INTO callback_outbox (event_id, merchant_id, object_type, object_id, body, sequence, next_attempt_at, created_at, position) VALUES ${values.join(',')}`,
        chunk.flatMap((body) => {
          const parsed = JSON.parse(body) as { event_id: string; id: string };
          return [parsed.event_id, parsed.id, body];
        }),
      );
    }
    const gateway = await startServiceProcess({
      name: 'paygate',
      entry: join(root, 'src/server.ts'),
      cwd: root,
      // The default interval: the dispatcher claims again as deliveries end, not per pass.
      env: gatewayEnv,
      healthPath: '/health',
      timeoutMs: 60_000,
    });
    try {
      const pids = processTree(gateway.pid as number);
      const gatewayCpu0 = cpuMicros(pids);
      // The gateway's PostgreSQL backends (the anchor has none): their CPU is printed apart.
      const backends = async () =>
        (
          await db.query<{ pid: number }>(
            'SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()',
          )
        ).rows.map((row) => row.pid);
      const databaseCpu0 = new Map((await backends()).map((pid) => [pid, cpuMicros([pid])]));
      await fetch(`${receiver.url}/reset`, { method: 'POST' }).then((r) => r.arrayBuffer());
      await db.query('UPDATE callback_outbox SET next_attempt_at = now()');
      const began = performance.now();
      for (;;) {
        const { rows } = await db.query<{ n: number }>(
          'SELECT count(*)::int AS n FROM callback_outbox WHERE delivered_at IS NULL',
        );
        if (rows[0]?.n === 0) break;
        if (performance.now() - began > 300_000) throw new Error('callbacks not delivered in 5 minutes');
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      const ended = Date.now();
      // From the first callback's arrival: the wait for the worker's next pass (up to
      // WORKER_INTERVAL_MS, idle) is not delivery time.
      const { first } = (await (await fetch(`${receiver.url}/count`)).json()) as { first: number };
      const seconds = (ended - first) / 1000;
      line('callbacks delivered', anchorPhase, {
        ops: bodies.length,
        seconds,
        cpuUsPerOp: (cpuMicros(pids) - gatewayCpu0) / bodies.length,
      });
      let databaseCpu = 0;
      for (const pid of await backends()) databaseCpu += cpuMicros([pid]) - (databaseCpu0.get(pid) ?? 0);
      console.log(
        `(callbacks: the gateway's PostgreSQL backends used ${(databaseCpu / bodies.length).toFixed(0)} us CPU/op besides)`,
      );
      console.log(
        "(callbacks: the gateway is timed from the first callback's arrival to the last one recorded delivered; the anchor's CPU is the receiver's, the gateway's its own)",
      );
    } finally {
      await gateway.stop();
      await db.end();
    }
  }
} finally {
  await receiver.stop();
  await gatewayDb.drop();
  await anchorDb.drop();
  await rm(work, { recursive: true, force: true });
}
