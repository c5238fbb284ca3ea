/**
 * Webhooks (issue 45): "writes with 10 webhook subscriptions keep >= 0.8x of writes without" and
 * "1,000 deliveries/s held to a bare local receiver". A server process on PostgreSQL and a bare
 * receiver process (`bare-receiver.ts`: 204 at once, no verification).
 *
 * Writes: 16 concurrent writers creating events for BENCH_SECONDS (5) per phase, rounds
 * alternating between no subscription and 10 subscriptions of the writer to the receiver, first
 * with the sender running (it delivers 10 messages per write on the same 2 cores), then with
 * WEBHOOK_DISPATCH=false (the write path alone: the change log keeps the event's fields).
 *
 * Deliveries: a backlog of BENCH_BACKLOG (10,000) changes written while no sender runs, then a
 * server with the sender started: messages per second from the first delivery to the last, for 1
 * subscription (sent one at a time, in order) and for 10 (WEBHOOK_CONCURRENCY 8 at once). Anchor
 * in the same run: a bare loop of keep-alive POSTs of the same bodies from this process, one at a
 * time and 8 at once (what a sender with no database could do).
 *
 *   npx tsx services/events/bench/webhooks.bench.ts   # BENCH_ROUNDS (5), BENCH_SECONDS (5), BENCH_BACKLOG (10000),
 *                                                     # BENCH_PARTS (writes,deliveries)
 */
import { Agent, request } from 'node:http';
import { resolve } from 'node:path';
import type { ServiceProcess } from '@platform/testkit/app';
import { cpuMicros, processTree } from '@platform/testkit/cpu';
import type { TestDatabase } from '@platform/testkit/postgres';
import { type ManagedProcess, spawnManaged } from '@platform/testkit/process';
import { median } from '@platform/testkit/stats';
import { until } from '@platform/testkit/wait';
import { createPgClient } from '../src/storage/pg-client.js';
import { database, load, server, token } from './features-kit.js';
import { seedEvents } from './seed.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const BACKLOG = Number(process.env.BENCH_BACKLOG ?? 10_000);
const WRITERS = 16;
const ENV = { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', WEBHOOK_POLL_MS: '100' };

async function receiver(): Promise<{ proc: ManagedProcess; url: string; count(): Promise<number> }> {
  let output = '';
  const proc = spawnManaged({
    name: 'receiver',
    command: process.execPath,
    args: ['--import', 'tsx', resolve(import.meta.dirname, 'bare-receiver.ts')],
    onOutput: (text) => {
      output += text;
    },
  });
  const port = await until('the receiver', () => /listening (\d+)/.exec(output)?.[1], 30_000);
  const url = `http://127.0.0.1:${port}`;
  return { proc, url, count: async () => Number(await (await fetch(`${url}/count`)).text()) };
}

/** CPU (us) of each backend of `db` (PostgreSQL's processes serving it, from /proc), and its commits. */
async function pgState(
  admin: ReturnType<typeof createPgClient>,
  db: TestDatabase,
): Promise<{ cpu: Map<number, number>; commits: number }> {
  const rows = await admin.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE datname = $1', [
    db.name,
  ]);
  const cpu = new Map<number, number>();
  for (const row of rows) cpu.set(Number(row.pid), cpuMicros([Number(row.pid)]));
  // Counters of other backends are flushed within a second (PostgreSQL 15): good enough for phases of seconds.
  const stats = await admin.query<{ n: string }>(
    'SELECT xact_commit::text AS n FROM pg_stat_database WHERE datname = $1',
    [db.name],
  );
  return { cpu, commits: Number(stats[0]?.n ?? 0) };
}

/** CPU per write (us) of the server, PostgreSQL's backends of the database and the receiver; commits per write. */
interface PhaseCost {
  rate: number;
  serverUs: number;
  pgUs: number;
  receiverUs: number;
  commits: number;
  /** Deliveries the receiver counted during the phase, per write. */
  delivered: number;
  /** Seconds after the phase until the receiver had every message of its writes (NaN: not waited for). */
  catchUp: number;
  /** CPU per write (us) of the server and PostgreSQL from the phase's start until then (its deliveries included). */
  settledUs: number;
}

async function measured(
  run: () => Promise<{ rate: number; writes: number }>,
  ctx: {
    admin: ReturnType<typeof createPgClient>;
    db: TestDatabase;
    serverPid: number | undefined;
    sink: Sink;
  },
  messagesPerWrite = 0,
): Promise<PhaseCost> {
  const tree = (pid: number | undefined): number =>
    pid === undefined ? Number.NaN : cpuMicros(processTree(pid));
  const pgBefore = await pgState(ctx.admin, ctx.db);
  const serverBefore = tree(ctx.serverPid);
  const receiverBefore = tree(ctx.sink.proc.pid);
  const countBefore = await ctx.sink.count();
  const { rate, writes } = await run();
  const serverUs = tree(ctx.serverPid) - serverBefore;
  const receiverUs = tree(ctx.sink.proc.pid) - receiverBefore;
  const countAfter = await ctx.sink.count();
  const pgAfter = await pgState(ctx.admin, ctx.db);
  let pgUs = 0;
  for (const [pid, after] of pgAfter.cpu) pgUs += after - (pgBefore.cpu.get(pid) ?? 0);
  const n = Math.max(1, writes);
  // A sender behind its writes at the phase's end: how long until it caught up, and its CPU meanwhile.
  let catchUp = Number.NaN;
  let settledUs = serverUs + pgUs;
  if (messagesPerWrite > 0) {
    const ended = performance.now();
    const target = countBefore + messagesPerWrite * writes;
    while ((await ctx.sink.count()) < target && performance.now() - ended < 60_000) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    catchUp =
      (await ctx.sink.count()) >= target ? (performance.now() - ended) / 1000 : Number.POSITIVE_INFINITY;
    const pgSettled = await pgState(ctx.admin, ctx.db);
    settledUs = tree(ctx.serverPid) - serverBefore;
    for (const [pid, after] of pgSettled.cpu) settledUs += after - (pgBefore.cpu.get(pid) ?? 0);
  }
  return {
    catchUp,
    settledUs: settledUs / n,
    rate,
    serverUs: serverUs / n,
    pgUs: pgUs / n,
    receiverUs: receiverUs / n,
    // The admin connection's own two statements are not counted.
    commits: (pgAfter.commits - pgBefore.commits - 2) / n,
    delivered: (countAfter - countBefore) / n,
  };
}

type Sink = Awaited<ReturnType<typeof receiver>>;

/** Events created per second by WRITERS concurrent writers during SECONDS. */
async function writeRate(base: string, auth: string): Promise<{ rate: number; writes: number }> {
  const until = performance.now() + SECONDS * 1000;
  let done = 0;
  let n = 0;
  const body = JSON.stringify({
    name: 'Bench write',
    body: '## Agenda\nTalks and demos.',
    date: '2026-06-01T18:00:00Z',
  });
  const writer = async (): Promise<void> => {
    while (performance.now() < until) {
      n += 1;
      const response = await fetch(`${base}/events/w-${process.pid}-${Date.now().toString(36)}-${n}`, {
        method: 'PUT',
        headers: { authorization: `Bearer ${auth}`, 'content-type': 'application/json' },
        body,
      });
      await response.arrayBuffer();
      if (response.status !== 201) throw new Error(`PUT: ${response.status}`);
      done += 1;
    }
  };
  const start = performance.now();
  await Promise.all(Array.from({ length: WRITERS }, writer));
  return { rate: done / ((performance.now() - start) / 1000), writes: done };
}

async function subscribeTen(base: string, auth: string, url: string): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < 10; i++) {
    const response = await fetch(`${base}/webhooks`, {
      method: 'POST',
      headers: { authorization: `Bearer ${auth}`, 'content-type': 'application/json' },
      body: JSON.stringify({ url: `${url}/hook/${i}` }),
    });
    if (response.status !== 201)
      throw new Error(`POST /webhooks: ${response.status} ${await response.text()}`);
    ids.push(((await response.json()) as { id: string }).id);
  }
  return ids;
}

async function unsubscribe(base: string, auth: string, ids: readonly string[]): Promise<void> {
  for (const id of ids) {
    await fetch(`${base}/webhooks/${id}`, { method: 'DELETE', headers: { authorization: `Bearer ${auth}` } });
  }
}

function costLine(label: string, costs: readonly PhaseCost[]): string {
  const m = (pick: (c: PhaseCost) => number): string => median(costs.map(pick)).toFixed(0);
  return (
    `${label}: CPU per write server ${m((c) => c.serverUs)} us + PostgreSQL ${m((c) => c.pgUs)} us` +
    ` (receiver ${m((c) => c.receiverUs)} us), commits per write ${median(costs.map((c) => c.commits)).toFixed(2)}` +
    `, delivered in the phase per write ${median(costs.map((c) => c.delivered)).toFixed(2)}` +
    (Number.isNaN(costs[0]?.catchUp ?? Number.NaN)
      ? ''
      : `; the rest delivered ${median(costs.map((c) => c.catchUp)).toFixed(1)} s after the phase, ` +
        `CPU per write with its 10 deliveries (server + PostgreSQL) ${m((c) => c.settledUs)} us`)
  );
}

async function writePhase(db: TestDatabase, sink: Sink, dispatch: boolean): Promise<void> {
  const proc = await server(db, { ...ENV, WEBHOOK_DISPATCH: String(dispatch) });
  const admin = createPgClient({ url: db.url, poolMax: 1 });
  try {
    const auth = await token(`writer-${dispatch}`);
    await writeRate(proc.url, auth); // warm-up
    const ctx = { admin, db, serverPid: proc.pid, sink };
    const without: PhaseCost[] = [];
    const withTen: PhaseCost[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const order = round % 2 === 0 ? ['without', 'with'] : ['with', 'without'];
      for (const phase of order) {
        if (phase === 'without') without.push(await measured(() => writeRate(proc.url, auth), ctx));
        else {
          const ids = await subscribeTen(proc.url, auth, sink.url);
          withTen.push(await measured(() => writeRate(proc.url, auth), ctx, dispatch ? 10 : 0));
          await unsubscribe(proc.url, auth, ids);
        }
      }
    }
    const ratios = withTen.map((w, i) => w.rate / (without[i] as PhaseCost).rate);
    const ratio = median(ratios);
    const cpu = (c: PhaseCost): number => c.serverUs + c.pgUs;
    const cpuRatio = median(without.map(cpu)) / median(withTen.map(cpu));
    console.log(
      `writes, sender ${dispatch ? 'running' : 'off (WEBHOOK_DISPATCH=false)'}: without subscriptions ${median(without.map((c) => c.rate)).toFixed(0)}/s, ` +
        `with 10 ${median(withTen.map((c) => c.rate)).toFixed(0)}/s; ratio ${ratio.toFixed(2)}x (target >= 0.8x) ${ratio >= 0.8 ? 'OK' : 'BELOW'} | ` +
        `rounds ${ratios.map((r) => r.toFixed(2)).join(' ')} | CPU per write (server + PostgreSQL) without/with ${cpuRatio.toFixed(2)}x | load ${load()}`,
    );
    console.log(`  ${costLine('without', without)}`);
    console.log(`  ${costLine('with 10', withTen)}`);
  } finally {
    await admin.close();
    await proc.stop();
  }
}

/** Keep-alive POSTs of `body` to `url`, `parallel` at a time, `count` in all: per second. */
async function bareRate(url: string, body: string, count: number, parallel: number): Promise<number> {
  const agent = new Agent({ keepAlive: true, maxSockets: parallel });
  let next = 0;
  const one = (): Promise<void> =>
    new Promise((done, fail) => {
      const req = request(
        url,
        { method: 'POST', agent, headers: { 'content-type': 'application/json' } },
        (res) => {
          res.resume();
          res.on('end', done);
        },
      );
      req.on('error', fail);
      req.end(body);
    });
  const start = performance.now();
  await Promise.all(
    Array.from({ length: parallel }, async () => {
      while (next < count) {
        next += 1;
        await one();
      }
    }),
  );
  agent.destroy();
  return count / ((performance.now() - start) / 1000);
}

async function drainPhase(sink: Sink, subscriptions: number): Promise<void> {
  const db = await database();
  let proc: ServiceProcess | undefined;
  try {
    const setup = await server(db, { ...ENV, WEBHOOK_DISPATCH: 'false' });
    const auth = await token('drain');
    const ids = await subscribeTen(setup.url, auth, sink.url);
    await unsubscribe(setup.url, auth, ids.slice(subscriptions));
    await setup.stop();
    const perSubscription = Math.round(BACKLOG / subscriptions);
    const client = createPgClient({ url: db.url, poolMax: 1 });
    await seedEvents(client, perSubscription);
    // Every tenth seeded event is PRIVATE to its creator: not for these subscriptions.
    const visible = await client.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM events WHERE access = 'PUBLIC'",
    );
    await client.close();
    const before = await sink.count();
    const total = Number(visible[0]?.n) * subscriptions;
    proc = await server(db, ENV);
    const admin = createPgClient({ url: db.url, poolMax: 1 });
    let first = Number.NaN;
    await until(
      'the first delivery',
      async () => {
        if ((await sink.count()) > before) first = performance.now();
        return !Number.isNaN(first);
      },
      60_000,
      5,
    );
    // CPU of the drain (us per message) from the first delivery on: the server (its sender thread
    // included), PostgreSQL's backends of this database and the receiver.
    const tree = (pid: number | undefined): number =>
      pid === undefined ? Number.NaN : cpuMicros(processTree(pid));
    const serverBefore = tree(proc.pid);
    const receiverBefore = tree(sink.proc.pid);
    const pgBefore = await pgState(admin, db);
    const firstCount = await sink.count();
    await until('the backlog delivered', async () => (await sink.count()) - before >= total, 600_000, 20);
    const rate = (total - (firstCount - before)) / ((performance.now() - first) / 1000);
    const sent = total - (firstCount - before);
    const serverUs = (tree(proc.pid) - serverBefore) / sent;
    const receiverUs = (tree(sink.proc.pid) - receiverBefore) / sent;
    const pgAfter = await pgState(admin, db);
    await admin.close();
    let pgUs = 0;
    for (const [pid, after] of pgAfter.cpu) pgUs += after - (pgBefore.cpu.get(pid) ?? 0);
    pgUs /= sent;
    const body = JSON.stringify({
      type: 'event.created',
      timestamp: new Date().toISOString(),
      data: {
        eventId: 'bench-1',
        name: 'Community event number 1',
        body: `## Agenda\n${'Talks, demos and a long Markdown description. '.repeat(6)}`,
      },
    });
    const anchorCpu = process.cpuUsage();
    const anchorCount = Math.min(total, 5_000);
    const anchor = await bareRate(`${sink.url}/hook/anchor`, body, anchorCount, subscriptions === 1 ? 1 : 8);
    const { user, system } = process.cpuUsage(anchorCpu);
    const anchorUs = (user + system) / anchorCount;
    console.log(
      `deliveries, ${subscriptions} subscription${subscriptions === 1 ? '' : 's'}: ${total} messages at ${rate.toFixed(0)}/s ` +
        `(target >= 1000/s) ${rate >= 1000 ? 'OK' : 'BELOW'}; bare POST loop ${subscriptions === 1 ? '1' : '8'} at a time: ` +
        `${anchor.toFixed(0)}/s; ratio ${(rate / anchor).toFixed(2)}x | load ${load()}`,
    );
    console.log(
      `  CPU per message: server ${serverUs.toFixed(0)} us + PostgreSQL ${pgUs.toFixed(0)} us, receiver ${receiverUs.toFixed(0)} us; ` +
        `the bare loop's own CPU per POST ${anchorUs.toFixed(0)} us`,
    );
  } finally {
    await proc?.stop();
    await db.drop();
  }
}

const sink = await receiver();
try {
  console.log(`load at start ${load()} (1, 5, 15 min)`);
  // BENCH_PARTS=writes or =deliveries runs one half.
  const parts = process.env.BENCH_PARTS ?? 'writes,deliveries';
  if (parts.includes('writes')) {
    const db = await database();
    try {
      if (!process.env.BENCH_DISPATCH || process.env.BENCH_DISPATCH === 'true')
        await writePhase(db, sink, true);
      if (!process.env.BENCH_DISPATCH || process.env.BENCH_DISPATCH === 'false')
        await writePhase(db, sink, false);
    } finally {
      await db.drop();
    }
  }
  if (parts.includes('deliveries')) {
    await drainPhase(sink, 1);
    await drainPhase(sink, 10);
  }
} finally {
  await sink.proc.stop();
}
