import { describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.js';
import { reconcile } from '../../src/ledger/reconcile.js';
import { balancesOf } from '../../src/ledger/store.js';
import { CommitFeed, type CommittedBatch } from '../../src/orders/commits.js';
import { LevelBook } from '../../src/orders/level-book.js';
import { OrderService } from '../../src/orders/service.js';
import { credit, newAccount } from '../support/accounts.js';
import { reference, usePostgresTarget } from '../support/targets.js';

/**
 * The order writer's recovery paths (src/orders/writer.ts): what callers see when a batch cannot be
 * written, the engine cannot be brought back, or the outcome cannot be taken up. In each case every
 * caller is answered (never left waiting) and nothing is applied twice or left in the book that the
 * stored log does not hold.
 */
const target = usePostgresTarget();
const T = 1_700_000_000_000;

/** Faults injected around the real database, the way a failing network or server shows them. */
interface Faults {
  /** The next batch statement's connection fails: before the statement is sent, or after it committed. */
  loseNextBatch: 'before' | 'after' | undefined;
  /** Reads of the command log fail (the database cannot be reached for a rebuild). */
  logUnreadable: boolean;
}

function faulty(db: Database, faults: Faults): Database {
  return {
    kind: db.kind,
    transaction: (fn) => db.transaction(fn),
    close: () => db.close(),
    async query<Row>(text: string, params?: readonly unknown[]) {
      if (faults.logUnreadable && text.includes('FROM engine_commands')) {
        throw new Error('command log unreachable');
      }
      return db.query<Row>(text, params);
    },
    ordered() {
      const channel = db.ordered();
      return {
        release: () => channel.release(),
        async query<Row>(text: string, params?: readonly unknown[]) {
          const batch = text.includes('INSERT INTO engine_commands');
          if (batch && faults.loseNextBatch === 'before') {
            faults.loseNextBatch = undefined;
            throw new Error('Connection terminated unexpectedly');
          }
          const result = await channel.query<Row>(text, params);
          if (batch && faults.loseNextBatch === 'after') {
            faults.loseNextBatch = undefined;
            throw new Error('Connection terminated unexpectedly');
          }
          return result;
        },
      };
    },
  };
}

async function seller(): Promise<number> {
  const id = (await newAccount(target.db())).id;
  await credit(target.db(), id, 'btc', 10n ** 10n);
  return id;
}

const sell = (accountId: number, price: bigint) =>
  ({ type: 'limit', accountId, side: 'sell', price, amount: 10_000n }) as const;

async function storedAt(price: bigint): Promise<number> {
  const { rows } = await target
    .db()
    .query<{ n: number }>(`SELECT count(*)::int AS n FROM orders WHERE market = 'btcuah' AND price = $1`, [
      price.toString(),
    ]);
  return rows[0]!.n;
}

/** The book a service started afresh on the stored log has: the one the writer must have. */
async function storedBook(): Promise<unknown> {
  const fresh = await OrderService.start({ db: target.db(), reference, now: () => T });
  try {
    return fresh.writer('btcuah')!.book.snapshot();
  } finally {
    await fresh.close();
  }
}

describe('order writer recovery (postgres)', () => {
  it('a batch whose answer was lost but which committed reaches the followers after the rebuild (its trades, the rebuilt book)', async () => {
    const maker = await seller();
    const taker = (await newAccount(target.db())).id;
    await credit(target.db(), taker, 'uah', 10n ** 12n);
    const faults: Faults = { loseNextBatch: undefined, logUnreadable: false };
    const commits = new CommitFeed();
    const heard: CommittedBatch[] = [];
    commits.subscribe((batch) => heard.push(batch));
    const service = await OrderService.start({
      db: faulty(target.db(), faults),
      reference,
      now: () => T,
      commits,
    });
    // A follower's copy of the book, kept from the batches as market stats and the feed keep theirs.
    const followed = new LevelBook(service.writer('btcuah')!.view());
    commits.subscribe((batch) => {
      if (batch.market.id !== 'btcuah') return;
      if (batch.book) followed.replace(batch.book);
      else followed.apply(batch.levels, batch.lastPrice);
    });
    try {
      const price = 9_050_001n;
      expect((await service.place('btcuah', sell(maker, price))).ok).toBe(true);
      faults.loseNextBatch = 'after';
      const lost = await service
        .place('btcuah', { type: 'limit', accountId: taker, side: 'buy', price, amount: 10_000n })
        .then(
          () => 'answered',
          (error: unknown) => String(error),
        );
      expect(lost).toBe('Error: Connection terminated unexpectedly');
      // The next request runs after the rebuild, so the recovered batch was published by then.
      expect((await service.place('btcuah', sell(maker, price + 7n))).ok).toBe(true);
      const recovered = heard.filter((batch) => batch.recovered);
      expect(recovered).toHaveLength(1);
      const { rows } = await target
        .db()
        .query<{ id: string }>(`SELECT id::text FROM trades WHERE market = 'btcuah' AND price = $1`, [
          price.toString(),
        ]);
      expect(recovered[0]!.trades.map((trade) => String(trade.id))).toEqual(rows.map((row) => row.id));
      expect(recovered[0]!.book).toBeDefined();
      // The batches heard leave the followers with the stored book.
      const fresh = await OrderService.start({ db: target.db(), reference, now: () => T });
      try {
        expect(followed.view()).toEqual(fresh.writer('btcuah')!.view());
      } finally {
        await fresh.close();
      }
    } finally {
      await service.close();
    }
  });

  it.each([
    ['was never sent', 'before', 0],
    ['had committed', 'after', 1],
  ] as const)(
    'a failed rebuild leaves the writer stale: the callers get the error, the next request rebuilds first (the lost batch %s)',
    async (_what, when, stored) => {
      const maker = await seller();
      const price = when === 'before' ? 9_100_001n : 9_100_002n;
      const faults: Faults = { loseNextBatch: undefined, logUnreadable: false };
      const service = await OrderService.start({ db: faulty(target.db(), faults), reference, now: () => T });
      try {
        faults.loseNextBatch = when;
        faults.logUnreadable = true;
        await expect(service.place('btcuah', sell(maker, price))).rejects.toThrow(/command log unreachable/);
        faults.logUnreadable = false;
        // The next request rebuilds the engine from the log first, so the book holds the lost order
        // exactly when the database does.
        const next = await service.place('btcuah', sell(maker, price + 10n));
        expect(next.ok).toBe(true);
        expect(await storedAt(price)).toBe(stored);
        const book = service.writer('btcuah')!.book;
        expect(book.depth().asks.filter(([level]) => level === price)).toEqual(
          stored ? [[price, 10_000n, 1]] : [],
        );
        expect(book.snapshot()).toEqual(await storedBook());
        const [btc] = await balancesOf(target.db(), maker);
        expect(btc!.locked).toBe(BigInt(stored + 1) * service.market('btcuah')!.baseToLedger(10_000n));
        expect((await reconcile(target.db())).problems).toEqual([]);
      } finally {
        await service.close();
      }
    },
  );

  it('gives up after the retry budget: the caller gets the conflict, nothing is applied, the writer goes on', async () => {
    const maker = await seller();
    const price = 9_200_001n;
    const db = target.db();
    // A serialisation failure (retryable) every time a batch stores an order at this price.
    await db.query(`
      CREATE FUNCTION always_conflict() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN RAISE EXCEPTION 'conflict for the test' USING ERRCODE = '40001'; END $$`);
    await db.query(`
      CREATE TRIGGER always_conflict BEFORE INSERT ON orders FOR EACH ROW
        WHEN (NEW.price = 9200001) EXECUTE FUNCTION always_conflict()`);
    const service = await OrderService.start({ db, reference, now: () => T });
    try {
      const writer = service.writer('btcuah')!;
      const before = writer.book.snapshot();
      const failedBefore = writer.stats.failed;
      await expect(service.place('btcuah', sell(maker, price))).rejects.toMatchObject({ code: '40001' });
      // Computed and sent eight times (ATTEMPTS), then answered with the error.
      expect(writer.stats.failed - failedBefore).toBe(8);
      expect(writer.book.snapshot()).toEqual(before);
      expect(await storedAt(price)).toBe(0);
      expect(await balancesOf(db, maker)).toEqual([{ currency: 'btc', available: 10n ** 10n, locked: 0n }]);
      expect((await service.place('btcuah', sell(maker, price + 1n))).ok).toBe(true);
      expect(writer.book.snapshot()).toEqual(await storedBook());
      expect((await reconcile(db)).problems).toEqual([]);
    } finally {
      await service.close();
      await db.query('DROP TRIGGER always_conflict ON orders');
    }
  });

  it('send throwing part-way through a batch: every caller of the batch gets the error, the engine goes back', async () => {
    const maker = await seller();
    let calls = 0;
    let failAt = -1;
    // The injected clock fails once, while the third request of the batch is computed.
    const now = () => {
      calls += 1;
      if (calls === failAt) throw new Error('clock failed');
      return T;
    };
    const service = await OrderService.start({ db: target.db(), reference, now });
    try {
      const writer = service.writer('btcuah')!;
      const before = writer.book.snapshot();
      failAt = calls + 3;
      // Queued together, so one batch: the first two are in the engine when the third throws.
      const outcomes = await Promise.allSettled(
        [9_300_001n, 9_300_002n, 9_300_003n].map((price) => service.place('btcuah', sell(maker, price))),
      );
      expect(outcomes.map((o) => o.status === 'rejected' && String(o.reason))).toEqual([
        'Error: clock failed',
        'Error: clock failed',
        'Error: clock failed',
      ]);
      expect(writer.book.snapshot()).toEqual(before);
      expect(await storedAt(9_300_001n)).toBe(0);
      // And the writer goes on from the committed state, with the next sequence number.
      expect((await service.place('btcuah', sell(maker, 9_300_001n))).ok).toBe(true);
      expect(writer.book.snapshot()).toEqual(await storedBook());
      const lot = service.market('btcuah')!.baseToLedger(10_000n);
      expect(await balancesOf(target.db(), maker)).toEqual([
        { currency: 'btc', available: 10n ** 10n - lot, locked: lot },
      ]);
      expect((await reconcile(target.db())).problems).toEqual([]);
    } finally {
      await service.close();
    }
  });

  it('an order missing after its batch: the caller gets an error (never waits), the batch is applied once', async () => {
    const maker = await seller();
    const service = await OrderService.start({ db: target.db(), reference, now: () => T });
    try {
      const placed = await service.place('btcuah', sell(maker, 9_400_001n));
      if (!placed.ok) throw new Error(placed.message);
      // The order's row disappears behind the writer's back (no foreign keys on the hot path).
      await target.db().query('DELETE FROM orders WHERE id = $1', [placed.order.id]);
      const writer = service.writer('btcuah')!;
      await expect(
        writer.submit({ type: 'cancel', accountId: maker, orderId: placed.order.id }),
      ).rejects.toThrow(`order ${placed.order.id} missing after its batch`);
      // The cancel itself committed once: the lock was released once and the book no longer has it.
      expect(await balancesOf(target.db(), maker)).toEqual([
        { currency: 'btc', available: 10n ** 10n, locked: 0n },
      ]);
      expect(writer.book.depth().asks.filter(([level]) => level === 9_400_001n)).toEqual([]);
      expect(writer.book.snapshot()).toEqual(await storedBook());
      expect((await service.place('btcuah', sell(maker, 9_400_002n))).ok).toBe(true);
      expect((await reconcile(target.db())).problems).toEqual([]);
    } finally {
      await service.close();
    }
  });
});
