import { useTestDatabase } from '@platform/testkit/fixtures';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { logTails, wholeTail } from '../../src/cluster/follow.js';
import { claimLeases, ensureLeases, heartbeat, keepFeedWanted } from '../../src/cluster/leases.js';
import type { Database } from '../../src/db/database.js';
import { openStorage } from '../../src/db/open.js';
import { syncCurrencies } from '../../src/ledger/store.js';
import { OrderService } from '../../src/orders/service.js';
import { ID_STRIDE } from '../../src/orders/writer.js';
import { credit, newAccount } from '../support/accounts.js';
import { reference } from '../support/targets.js';

// The fence of a cluster's batches (030_cluster.sql, writeBatch): a writer whose lease was taken
// over (epoch bumped) commits nothing more for that market, while its request is refused cleanly.
const database = useTestDatabase('exchange_fencing');

describe('cluster fencing (PostgreSQL)', () => {
  let db: Database;
  let service: OrderService;
  let accountId: number;
  beforeAll(async () => {
    db = await openStorage({ kind: 'postgres', url: database.url, poolSize: 4 });
    await syncCurrencies(db, reference);
    accountId = (await newAccount(db)).id;
    await credit(db, accountId, 'uah', 10n ** 16n);
    service = await OrderService.start({ db, reference, now: Date.now, clusterNode: 'a' });
    await ensureLeases(db, [...service.markets.keys()]);
    await heartbeat(db, 'a', 'http://127.0.0.1:1', {}, {});
  });
  afterAll(async () => {
    await service?.close();
    await db?.close();
  });

  const order = { type: 'limit', accountId: 0, side: 'buy', price: 1_000_000n, amount: 1_000n } as const;

  it('writes while it holds the lease, and not one batch after another node took it', async () => {
    const writer = service.writer('btcuah')!;
    // Not owned yet: a request is refused (503 unavailable), nothing queued.
    await expect(service.place('btcuah', { ...order, accountId })).rejects.toMatchObject({
      errorName: 'unavailable',
    });
    const taken = (await claimLeases(db, 'a', 60_000, 60_000)).find((lease) => lease.market === 'btcuah')!;
    await writer.takeOver({ ...taken }, (seq) => wholeTail(db, 'btcuah', seq));
    const first = await service.place('btcuah', { ...order, accountId });
    expect(first.ok).toBe(true);
    // Ids of the market are congruent to its slot modulo 1024, and its engines page ids by that
    // step (matching/id-keys.ts: paged by the id, each finished order had cost ~300 bytes).
    if (first.ok) expect(first.order.id % 1024).toBe(taken.slot);
    expect(service.markets.get('btcuah')!.spec.idStride).toBe(ID_STRIDE);

    // Another node takes the market over (as after this one paused past its lease).
    await db.query(`UPDATE market_leases SET owner = 'b', epoch = epoch + 1 WHERE market = 'btcuah'`);
    const before = await db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM orders WHERE market = 'btcuah'`,
    );
    await expect(service.place('btcuah', { ...order, accountId })).rejects.toMatchObject({ code: 'SVC02' });
    const after = await db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM orders WHERE market = 'btcuah'`,
    );
    expect(after.rows[0]!.n).toBe(before.rows[0]!.n);
    const { rows } = await db.query<{ seq: string }>(
      `SELECT max(seq)::text AS seq FROM engine_commands WHERE market = 'btcuah'`,
    );
    expect(Number(rows[0]!.seq)).toBe(writer.commandSeq);
  });

  it('continues its ids above those a single process wrote on the database meanwhile', async () => {
    // The operator ran the database without NODE_ID for a while (or a bench alternated the two): that
    // process numbers orders and trades one after the other from the largest stored id, so the
    // market's slot ids after the lease's last ones may be taken already.
    await db.query(`UPDATE market_leases SET owner = NULL, expires_at = '-infinity' WHERE market = 'btcuah'`);
    const { rows: lease } = await db.query<{ last: string; slot: number }>(
      `SELECT last_order_id::text AS last, id_slot AS slot FROM market_leases WHERE market = 'btcuah'`,
    );
    const single = await OrderService.start({ db, reference, now: Date.now });
    expect(single.markets.get('btcuah')!.spec.idStride).toBe(1);
    try {
      // Until the single process has used the market's next slot id after the lease's last one.
      const nextSlotId = (Math.floor(Number(lease[0]!.last) / 1024) + 1) * 1024 + lease[0]!.slot;
      for (let last = 0; last < nextSlotId; ) {
        const placed = await Promise.all(
          Array.from({ length: 100 }, () => single.place('btcuah', { ...order, accountId })),
        );
        for (const outcome of placed) if (outcome.ok) last = Math.max(last, outcome.order.id);
      }
    } finally {
      await single.close();
    }
    const writer = service.writer('btcuah')!;
    const taken = (await claimLeases(db, 'a', 60_000, 60_000)).find((l) => l.market === 'btcuah')!;
    await writer.takeOver({ ...taken }, (seq) => wholeTail(db, 'btcuah', seq));
    const { rows: stored } = await db.query<{ max: string }>('SELECT max(id)::text AS max FROM orders');
    const next = await service.place('btcuah', { ...order, accountId });
    expect(next.ok).toBe(true);
    if (next.ok) {
      expect(next.order.id).toBeGreaterThan(Number(stored[0]!.max));
      expect(next.order.id % 1024).toBe(taken.slot);
    }
  });

  it("logs a batch's feed only while another node follows the market", async () => {
    // 'a' owns btcuah (the test before) and is the only node: it asks nothing of itself, nor of the
    // markets nobody writes, and its batches log their commands only (a one-node cluster).
    expect(await keepFeedWanted(db, 'a', 60_000, 60_000)).toEqual([]);
    const writer = service.writer('btcuah')!;
    expect(writer.owned).toBe(true);
    const alone = await service.place('btcuah', { ...order, accountId });
    expect(alone.ok).toBe(true);
    const feedAt = async (seq: number) => {
      const { rows } = await db.query<{ logged: boolean }>(
        `SELECT feed IS NOT NULL AS logged FROM engine_commands WHERE market = 'btcuah' AND seq = $1`,
        [seq],
      );
      return rows[0]?.logged;
    };
    const aloneSeq = writer.commandSeq;
    expect(await feedAt(aloneSeq)).toBe(false);
    // 'b' joins: it asks for the market 'a' writes, and for those nobody writes while 'a' is live.
    await heartbeat(db, 'b', 'http://127.0.0.1:2', {}, {});
    const wanted = await keepFeedWanted(db, 'b', 60_000, 60_000);
    expect(wanted).toEqual([...service.markets.keys()].sort());
    // Asked again within half the window: nothing to renew.
    expect(await keepFeedWanted(db, 'b', 60_000, 60_000)).toEqual([]);
    const followed = await service.place('btcuah', { ...order, accountId });
    expect(followed.ok).toBe(true);
    expect(await feedAt(writer.commandSeq)).toBe(true);
    // What 'b' reads: the batch before without a feed, the one after with it.
    const tail = (await logTails(db, new Map([['btcuah', aloneSeq - 1]]))).get('btcuah')!;
    expect(tail.map((row) => row.feed !== undefined)).toEqual([false, true]);
    expect(tail[1]!.feed!.orders.map((o) => o.id)).toContain(followed.ok ? followed.order.id : -1);
  });
});
