import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { useTestDatabase } from '@platform/testkit/fixtures';
import { seedName, testSeeds } from '@platform/testkit/seeds';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { marketCommand } from '../../src/cluster/operator.js';
import type { Database } from '../../src/db/database.js';
import { openStorage } from '../../src/db/open.js';
import { syncCurrencies } from '../../src/ledger/store.js';
import { reference } from '../support/targets.js';
import {
  checkInvariants,
  crossingLoad,
  fundedTraders,
  newRecord,
  ownerOf,
  seeded,
  startExchangeCluster,
  TEST_LEASE_MS,
  type Trader,
} from './cluster-support.js';

// Jepsen-style faults against a real cluster on one PostgreSQL (README "Running a cluster"): after
// each, every acknowledged order is stored exactly once, fills match trades, no balance is negative,
// reconcile passes, every node shows the same uncrossed book, and no answer was a 5xx other than 503
// with retry-after. The same cluster also shows a planned move refusing no order, background jobs
// running on one node, and request limits counted across nodes.
//
// Default (short) form: two nodes, one kill, the rolling restart of one node, the waits bounded by
// polling the lease table. CLUSTER_FAULTS=long: three nodes, ten kills, every node restarted in
// turn, more load before and after each fault. Both forms run every post-fault check.
const LONG = process.env.CLUSTER_FAULTS === 'long';
const FORM = LONG
  ? { nodes: 3, kills: 10, pauses: 10, acks: 20, restartAll: true }
  : { nodes: 2, kills: 1, pauses: 1, acks: 10, restartAll: false };
const database = useTestDatabase('exchange_cluster');
const MARKETS = ['btcuah', 'ethuah'];
const LIMITS_FILE = fileURLToPath(new URL('./limits.yaml', import.meta.url));

describe.each(testSeeds([29]))('exchange cluster faults, %s', (seed) => {
  let db: Database;
  let traders: Trader[];
  let cluster: Awaited<ReturnType<typeof startExchangeCluster>>;
  const random = seeded(seed);

  beforeAll(async () => {
    db = await openStorage({ kind: 'postgres', url: database.url, poolSize: 4 });
    await syncCurrencies(db, reference);
    traders = await fundedTraders(db, 4);
    cluster = await startExchangeCluster(FORM.nodes, database.url, {
      // Counted in the database (the default on PostgreSQL); only a few public routes are limited.
      RATE_LIMITS_ENABLED: 'true',
      RATE_LIMITS_FILE: LIMITS_FILE,
    });
  }, 240_000);
  afterAll(async () => {
    await cluster?.close();
    await db?.close();
  }, 60_000);

  const node = (id: string | undefined) => {
    const found = cluster.nodes.find((n) => n.id === id);
    if (!found) throw new Error(`no running owner (${id})`);
    return found;
  };

  /** Load until `count` more orders are acknowledged (or the bound passes). */
  async function acks(record: ReturnType<typeof newRecord>, count: number, boundMs = 60_000): Promise<void> {
    const target = record.acked.size + count;
    const until = performance.now() + boundMs;
    while (record.acked.size < target && performance.now() < until) await sleep(20);
  }

  /** Polls `check` every 100 ms until it holds or `boundMs` passes; returns whether it held. */
  async function until(check: () => Promise<boolean>, boundMs = 30_000): Promise<boolean> {
    const end = performance.now() + boundMs;
    for (;;) {
      if (await check()) return true;
      if (performance.now() > end) return false;
      await sleep(100);
    }
  }

  it(`market move under load refuses no order, ${seedName(seed)}`, async () => {
    // (A node above its fair share may hand a market over meanwhile: a planned handover too, which
    // must not refuse an order either.)
    await until(async () => (await ownerOf(db, 'btcuah')) !== undefined);
    const record = newRecord();
    const load = crossingLoad(cluster, traders, ['btcuah'], random, record);
    await acks(record, FORM.acks);
    const from = await ownerOf(db, 'btcuah');
    const to = cluster.nodes.find((n) => n.id !== from)!.id;
    await marketCommand(db, 'move', 'btcuah', to);
    const moved = await until(async () => {
      const { rows } = await db.query<{ moving_to: string | null }>(
        `SELECT moving_to FROM market_leases WHERE market = 'btcuah'`,
      );
      return rows[0]!.moving_to === null && (await ownerOf(db, 'btcuah')) === to;
    }, 20_000);
    await acks(record, FORM.acks);
    await load.stop();
    expect(moved, `btcuah did not move from ${from} to ${to}`).toBe(true);
    expect(Object.fromEntries(record.statuses)).toEqual({ 201: record.acked.size });
    expect(await checkInvariants(db, cluster, record, ['btcuah'])).toEqual([]);
  }, 120_000);

  it(`each background job runs on one node only, ${seedName(seed)}`, async () => {
    const rounds = async () => {
      const { rows } = await db.query<{ node_id: string; job_rounds: Record<string, number> }>(
        'SELECT node_id, job_rounds FROM cluster_nodes',
      );
      return new Map(rows.map((row) => [row.node_id, row.job_rounds]));
    };
    const before = await rounds();
    // The payout dispatcher polls every 2 s: a few rounds of it, each written with a heartbeat.
    await sleep(5_000);
    const after = await rounds();
    const { rows: leases } = await db.query<{ job: string; owner: string | null }>(
      'SELECT job, owner FROM cluster_jobs WHERE expires_at > clock_timestamp()',
    );
    const ran = (job: string) =>
      [...after]
        .filter(([id, counts]) => (counts[job] ?? 0) > (before.get(id)?.[job] ?? 0))
        .map(([id]) => id);
    expect(ran('fiat-payouts')).toHaveLength(1);
    for (const job of ['wallet', 'fiat-payouts', 'fiat-deposit-expiry', 'code-expiry']) {
      const nodes = ran(job);
      expect(nodes.length, `${job} ran on ${nodes.join(', ')}`).toBeLessThanOrEqual(1);
      if (nodes.length === 1) expect(leases.find((l) => l.job === job)?.owner).toBe(nodes[0]);
    }
  }, 30_000);

  it(`request limits count across nodes, ${seedName(seed)}`, async () => {
    // 30 a day per address (test/cluster/limits.yaml): 40 requests spread over the nodes. What the
    // earlier tests of this cluster already counted against the address is read first (the counters
    // are the database's: request_limit_counters, 061).
    const { rows } = await db.query<{ count: string }>(
      `SELECT count::text FROM request_limit_counters WHERE rule = 'public-address'
          AND window_end > floor(extract(epoch FROM clock_timestamp()))`,
    );
    const used = rows.reduce((sum, row) => sum + Number(row.count), 0);
    const statuses: number[] = [];
    for (let i = 0; i < 40; i += 1) {
      const each = cluster.nodes[i % cluster.nodes.length]!;
      const response = await fetch(`${each.url}/v3/timestamp`);
      await response.arrayBuffer();
      statuses.push(response.status);
    }
    const allowed = Math.max(0, 30 - used);
    const seen = `${used} counted before; statuses ${statuses.join(' ')}`;
    expect(
      statuses.filter((s) => s === 200),
      seen,
    ).toHaveLength(allowed);
    expect(
      statuses.filter((s) => s === 429),
      seen,
    ).toHaveLength(40 - allowed);
  }, 30_000);

  it(
    `SIGKILL of an owner under crossing load, ${seedName(seed)}`,
    async () => {
      const failovers: number[] = [];
      for (let kill = 0; kill < FORM.kills; kill += 1) {
        const record = newRecord();
        const load = crossingLoad(cluster, traders, MARKETS, random, record);
        await acks(record, FORM.acks);
        const victim = node(await ownerOf(db, 'btcuah'));
        const killedAt = performance.now();
        victim.signal('SIGKILL');
        await victim.stop();
        // The first order of the market sent after the kill and accepted (an answer still on its way
        // from the victim when it was killed would time nothing).
        let firstAck: number | undefined;
        while (firstAck === undefined && performance.now() - killedAt < 30_000) {
          firstAck = record.ackTimes.find((a) => a.market === 'btcuah' && a.sentAt > killedAt)?.at;
          await sleep(20);
        }
        await acks(record, FORM.acks / 2);
        await load.stop();
        expect(firstAck, 'no order accepted after the kill').toBeDefined();
        failovers.push(firstAck! - killedAt);
        await victim.start();
        expect(await checkInvariants(db, cluster, record, MARKETS)).toEqual([]);
      }
      console.log(
        `failover (SIGKILL to the first order sent after it and accepted; lease ${TEST_LEASE_MS} ms), ms: ${failovers.map((f) => f.toFixed(0)).join(', ')}`,
      );
      expect(Math.max(...failovers)).toBeLessThan(20_000);
    },
    FORM.kills * 120_000,
  );

  it(
    `SIGSTOP of an owner past its lease, then SIGCONT: orders go on within the SIGKILL bound, ${seedName(seed)}`,
    async () => {
      // A paused owner (SIGSTOP, a frozen VM) keeps its TCP connections open: nothing tells the
      // other nodes it is gone but its lease running out. Orders sent to the other nodes meanwhile
      // must end when the lease moves (a forward already sent to the paused owner: 503, its outcome
      // unknown) or reach the new owner (one not sent yet), never wait out the forward's 10 s
      // timeout. Clients stop sending to the paused node itself (as they do to a killed one).
      const failovers: number[] = [];
      const lateness: number[] = [];
      const stuck: number[] = [];
      for (let pause = 0; pause < FORM.pauses; pause += 1) {
        const record = newRecord();
        const paused = new Set<string>();
        const load = crossingLoad(cluster, traders, MARKETS, random, record, paused);
        await acks(record, FORM.acks);
        const victim = node(await ownerOf(db, 'ethuah'));
        const { rows } = await db.query<{ epoch: string }>(
          `SELECT epoch::text FROM market_leases WHERE market = 'ethuah'`,
        );
        paused.add(victim.id);
        const stoppedAt = performance.now();
        victim.signal('SIGSTOP');
        // Its own clients give up on it (with 4 traders on 3 nodes, all 4 wait there 1 time in 81,
        // and for their 15 s timeout nobody sends to the other nodes).
        stuck.push(load.abandon(victim.id));
        // Past its lease: another node holds ethuah with a newer epoch.
        const taken = await until(async () => {
          const owner = await ownerOf(db, 'ethuah');
          return owner !== undefined && owner !== victim.id;
        });
        const takenAt = performance.now();
        // The first order of ethuah sent to another node after the stop and accepted.
        let firstAck: number | undefined;
        while (firstAck === undefined && performance.now() - stoppedAt < 40_000) {
          firstAck = record.ackTimes.find(
            (a) => a.market === 'ethuah' && a.node !== victim.id && a.sentAt > stoppedAt,
          )?.at;
          await sleep(20);
        }
        await acks(record, FORM.acks / 2);
        if (LONG) await sleep(3_000);
        const after = await db.query<{ owner: string; epoch: string }>(
          `SELECT owner, epoch::text FROM market_leases WHERE market = 'ethuah'`,
        );
        // How long after the lease moved the last order sent to another node before the move was
        // answered, or is still waiting now (before the fix: until its forward to the paused owner
        // timed out, 10 s after it was sent).
        const now = performance.now();
        const answeredAfterMove = record.sent
          .filter((a) => a.node !== victim.id && a.sentAt > stoppedAt - 1_000 && a.sentAt < takenAt)
          .map((a) => (a.at ?? now) - takenAt);
        victim.signal('SIGCONT');
        paused.delete(victim.id);
        expect(taken, 'no other node took ethuah').toBe(true);
        expect(after.rows[0]!.owner).not.toBe(victim.id);
        expect(Number(after.rows[0]!.epoch)).toBeGreaterThan(Number(rows[0]!.epoch));
        expect(firstAck, 'no order accepted after the stop').toBeDefined();
        failovers.push(firstAck! - stoppedAt);
        lateness.push(Math.max(0, ...answeredAfterMove));
        await acks(record, FORM.acks);
        if (LONG) await sleep(1_000);
        await load.stop();
        expect(await checkInvariants(db, cluster, record, MARKETS)).toEqual([]);
      }
      const sorted = [...failovers].sort((a, b) => a - b);
      const p99 = sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * 0.99) - 1)]!;
      console.log(
        `failover (SIGSTOP to the first order sent after it to another node and accepted; lease ${TEST_LEASE_MS} ms), ms: ${failovers.map((f) => f.toFixed(0)).join(', ')} (p99 ${p99.toFixed(0)}); last answer to an order sent before the lease moved, ms after the move: ${lateness.map((f) => f.toFixed(0)).join(', ')}; clients waiting at the paused node when it stopped: ${stuck.join(', ')} of ${traders.length}`,
      );
      // The SIGKILL case's bound; and no forward to the paused owner waited out its timeout once
      // the lease had moved (the test sees the move up to 100 ms late, the nodes up to a tick).
      expect(Math.max(...failovers)).toBeLessThan(20_000);
      expect(Math.max(...lateness)).toBeLessThan(3_000);
    },
    FORM.pauses * 120_000,
  );

  it(`an owner cut off from PostgreSQL while clients reach it, ${seedName(seed)}`, async () => {
    const record = newRecord();
    const load = crossingLoad(cluster, traders, MARKETS, random, record);
    await acks(record, FORM.acks);
    const victim = node(await ownerOf(db, 'btcuah'));
    victim.cutDatabase();
    const taken = await until(async () => {
      const owner = await ownerOf(db, 'btcuah');
      return owner !== undefined && owner !== victim.id;
    });
    if (LONG) await sleep(3_000);
    expect(taken, 'no other node took btcuah').toBe(true);
    await acks(record, FORM.acks);
    victim.reconnect();
    // The checks wait (bounded) for the reconnected node's book to agree.
    if (LONG) await sleep(2_000);
    await load.stop();
    expect(await checkInvariants(db, cluster, record, MARKETS)).toEqual([]);
  }, 180_000);

  it(`a rolling restart ${LONG ? 'of every node' : 'of the owner of btcuah'} under load, ${seedName(seed)}`, async () => {
    const record = newRecord();
    const load = crossingLoad(cluster, traders, MARKETS, random, record);
    const restarted = FORM.restartAll ? cluster.nodes : [node(await ownerOf(db, 'btcuah'))];
    for (const each of restarted) {
      await acks(record, FORM.acks / 2);
      await each.stop();
      await acks(record, FORM.acks / 2);
      await each.start();
    }
    await acks(record, FORM.acks / 2);
    await load.stop();
    expect(await checkInvariants(db, cluster, record, MARKETS)).toEqual([]);
  }, 900_000);
});
