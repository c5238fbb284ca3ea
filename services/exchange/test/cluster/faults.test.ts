import { setTimeout as sleep } from 'node:timers/promises';
import { useTestDatabase } from '@platform/testkit/fixtures';
import { seedName, testSeeds } from '@platform/testkit/seeds';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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
  type Trader,
} from './cluster-support.js';

// Jepsen-style faults against a real three-node cluster on one PostgreSQL (README "Running a
// cluster"): after each, every acknowledged order is stored exactly once, fills match trades, no
// balance is negative, reconcile passes, every node shows the same uncrossed book, and no answer was
// a 5xx other than 503 with retry-after. CLUSTER_FAULTS=long repeats the kill 10 times.
const database = useTestDatabase('exchange_cluster');
const MARKETS = ['btcuah', 'ethuah'];
const KILLS = process.env.CLUSTER_FAULTS === 'long' ? 10 : 1;

describe.each(testSeeds([29]))('exchange cluster faults, %s', (seed) => {
  let db: Database;
  let traders: Trader[];
  let cluster: Awaited<ReturnType<typeof startExchangeCluster>>;
  const random = seeded(seed);

  beforeAll(async () => {
    db = await openStorage({ kind: 'postgres', url: database.url, poolSize: 4 });
    await syncCurrencies(db, reference);
    traders = await fundedTraders(db, 4);
    cluster = await startExchangeCluster(3, database.url);
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

  it(`SIGKILL of an owner under crossing load, ${seedName(seed)}`, async () => {
    const failovers: number[] = [];
    for (let kill = 0; kill < KILLS; kill += 1) {
      const record = newRecord();
      const load = crossingLoad(cluster, traders, MARKETS, random, record);
      await acks(record, 20);
      const victim = node(await ownerOf(db, 'btcuah'));
      const killedAt = performance.now();
      victim.signal('SIGKILL');
      await victim.stop();
      // The first order of the market accepted after the kill.
      let firstAck: number | undefined;
      while (firstAck === undefined && performance.now() - killedAt < 30_000) {
        firstAck = record.ackTimes.find((a) => a.market === 'btcuah' && a.at > killedAt)?.at;
        await sleep(20);
      }
      await acks(record, 10);
      await load.stop();
      expect(firstAck, 'no order accepted after the kill').toBeDefined();
      failovers.push(firstAck! - killedAt);
      await victim.start();
      expect(await checkInvariants(db, cluster, record, MARKETS)).toEqual([]);
    }
    console.log(
      `failover (SIGKILL to first accepted order), ms: ${failovers.map((f) => f.toFixed(0)).join(', ')}`,
    );
    expect(Math.max(...failovers)).toBeLessThan(20_000);
  }, 300_000);

  it(`SIGSTOP of an owner past its lease, then SIGCONT, ${seedName(seed)}`, async () => {
    const record = newRecord();
    const load = crossingLoad(cluster, traders, MARKETS, random, record);
    await acks(record, 20);
    const victim = node(await ownerOf(db, 'ethuah'));
    const { rows } = await db.query<{ epoch: string }>(
      `SELECT epoch::text FROM market_leases WHERE market = 'ethuah'`,
    );
    victim.signal('SIGSTOP');
    await sleep(8_000);
    const after = await db.query<{ owner: string; epoch: string }>(
      `SELECT owner, epoch::text FROM market_leases WHERE market = 'ethuah'`,
    );
    expect(after.rows[0]!.owner).not.toBe(victim.id);
    expect(Number(after.rows[0]!.epoch)).toBeGreaterThan(Number(rows[0]!.epoch));
    victim.signal('SIGCONT');
    await acks(record, 20);
    await sleep(1_000);
    await load.stop();
    expect(await checkInvariants(db, cluster, record, MARKETS)).toEqual([]);
  }, 180_000);

  it(`an owner cut off from PostgreSQL while clients reach it, ${seedName(seed)}`, async () => {
    const record = newRecord();
    const load = crossingLoad(cluster, traders, MARKETS, random, record);
    await acks(record, 20);
    const victim = node(await ownerOf(db, 'btcuah'));
    victim.cutDatabase();
    await sleep(8_000);
    expect(await ownerOf(db, 'btcuah')).not.toBe(victim.id);
    await acks(record, 20);
    victim.reconnect();
    await sleep(2_000);
    await load.stop();
    expect(await checkInvariants(db, cluster, record, MARKETS)).toEqual([]);
  }, 180_000);

  it(`a rolling restart of every node under load, ${seedName(seed)}`, async () => {
    const record = newRecord();
    const load = crossingLoad(cluster, traders, MARKETS, random, record);
    for (const each of cluster.nodes) {
      await acks(record, 10);
      await each.stop();
      await acks(record, 10);
      await each.start();
    }
    await acks(record, 10);
    await load.stop();
    expect(await checkInvariants(db, cluster, record, MARKETS)).toEqual([]);
  }, 900_000);
});
