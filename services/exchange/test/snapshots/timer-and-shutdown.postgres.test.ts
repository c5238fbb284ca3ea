import { describe, expect, it } from 'vitest';
import { replayLog } from '../../src/orders/replay.js';
import { OrderService } from '../../src/orders/service.js';
import { BookSnapshots, type SnapshotEvent } from '../../src/snapshots/book-snapshots.js';
import { credit, newAccount } from '../support/accounts.js';
import { reference, usePostgresTarget } from '../support/targets.js';

/**
 * Durable book snapshots besides every `every` commands: one on a timer when an idle market has
 * committed commands since its last, and one at graceful shutdown, so a restart after a graceful
 * stop replays nothing.
 */
const target = usePostgresTarget();
const MARKET = 'btcuah';

describe('book snapshots on a timer and at graceful shutdown (PostgreSQL)', () => {
  it('a quiet market is snapshotted on the timer; after a graceful stop a restart replays nothing', async () => {
    const db = target.db();
    const written: SnapshotEvent[] = [];
    let wake: () => void = () => {};
    const report = (event: SnapshotEvent) => {
      written.push(event);
      wake();
    };
    // `every` far above the orders placed: only the timer and the shutdown take snapshots.
    const settings = { every: 100_000, keep: 2, intervalMs: 20 };
    const service = await OrderService.start({
      db,
      reference,
      now: Date.now,
      snapshots: { ...settings, report },
    });
    const [buyer, seller] = [(await newAccount(db)).id, (await newAccount(db)).id];
    await credit(db, buyer, 'uah', 10n ** 16n);
    await credit(db, seller, 'btc', 10n ** 12n);
    const place = (accountId: number, side: 'buy' | 'sell', price: bigint) =>
      service.place(MARKET, { type: 'limit', accountId, side, price, amount: 10_000n });

    await place(seller, 'sell', 1_500_000n);
    await place(buyer, 'buy', 1_490_000n);
    const writer = service.writer(MARKET)!;
    const quietAt = writer.commandSeq;
    // Waits for the timer's snapshot of the market as it stands (no sleep: woken by the report).
    while (!written.some((e) => e.type === 'written' && e.market === MARKET && e.seq === quietAt)) {
      await new Promise<void>((resolve) => {
        wake = resolve;
      });
    }
    // Nothing changed since: the timer takes no other.
    const count = written.length;
    service.offerSnapshots();
    await service.snapshots!.flushed();
    expect(written.length).toBe(count);

    // More commands after it, then a graceful stop (the timer is far too slow to take them).
    await place(buyer, 'buy', 1_500_000n);
    await place(seller, 'sell', 1_480_000n);
    const stoppedAt = writer.commandSeq;
    expect(stoppedAt).toBeGreaterThan(quietAt);
    await service.close();
    expect(written).toContainEqual(
      expect.objectContaining({ type: 'written', market: MARKET, seq: stoppedAt }),
    );

    const restarted = new BookSnapshots(db, settings);
    const restored = await restarted.restore(service.market(MARKET)!);
    expect(restarted.restored.get(MARKET)).toEqual({ from: stoppedAt, seq: stoppedAt });
    expect(restored.from?.since).toEqual([]);
    const full = await replayLog(db, service.market(MARKET)!);
    expect(restored.engine.snapshot()).toEqual(full.engine.snapshot());
  });
});
