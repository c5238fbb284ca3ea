import { describe, expect, it } from 'vitest';
import { cancel, engine, limit, market, ofType, ok, stop } from './fixtures.js';

/** Prints a trade at `price` between two helper accounts (the book is otherwise untouched). */
function tradeAt(e: ReturnType<typeof engine>, id: number, price: bigint) {
  ok(e, limit(id, 'x', 'sell', price, 1n));
  return ok(e, limit(id + 1, 'y', 'buy', price, 1n));
}

describe('stop-limit orders', () => {
  it('lock like a limit order and stay out of the visible book until triggered', () => {
    const e = engine();
    const events = ok(e, stop(1, 'a', 'buy', 10_500n, 10_600n, 100n));
    expect(events[0]).toMatchObject({ kind: 'limit_stop_loss', lockAsset: 'quote', lock: 10_600n * 100n });
    expect(e.depth()).toEqual({ bids: [], asks: [] });
    expect(e.order(1)).toMatchObject({ status: 'stop', stopPrice: 10_500n });
  });

  it('a buy stop triggers when the last price reaches it from below, not before', () => {
    const e = engine();
    ok(e, stop(1, 'a', 'buy', 10_500n, 10_600n, 100n));
    expect(ofType(tradeAt(e, 10, 10_499n), 'stop_triggered')).toHaveLength(0);
    const events = tradeAt(e, 20, 10_500n);
    expect(ofType(events, 'stop_triggered')).toEqual([
      expect.objectContaining({ orderId: 1, stopPrice: 10_500n, lastPrice: 10_500n }),
    ]);
    expect(e.order(1)).toMatchObject({ status: 'open', price: 10_600n, remaining: 100n });
  });

  it('a sell stop triggers when the last price falls to it', () => {
    const e = engine();
    ok(e, stop(1, 'a', 'sell', 9_500n, 9_400n, 100n));
    expect(ofType(tradeAt(e, 10, 9_501n), 'stop_triggered')).toHaveLength(0);
    expect(ofType(tradeAt(e, 20, 9_400n), 'stop_triggered').map((s) => s.orderId)).toEqual([1]);
    expect(e.order(1)).toMatchObject({ status: 'open', side: 'sell', price: 9_400n });
  });

  it('triggers immediately when the last price is already past the stop on entry', () => {
    const e = engine();
    tradeAt(e, 10, 10_000n);
    const events = ok(e, stop(1, 'a', 'buy', 9_900n, 10_000n, 5n));
    expect(events.map((ev) => ev.type)).toEqual(['accepted', 'stop_triggered']);
  });

  it('enters the book in trigger order: nearest stop first, then FIFO at one stop price', () => {
    const e = engine();
    ok(e, stop(1, 'a', 'buy', 10_300n, 10_000n, 1n));
    ok(e, stop(2, 'b', 'buy', 10_100n, 10_000n, 1n));
    ok(e, stop(3, 'c', 'buy', 10_100n, 10_000n, 1n));
    ok(e, stop(4, 'd', 'buy', 10_400n, 10_000n, 1n));
    const events = tradeAt(e, 10, 10_300n);
    expect(ofType(events, 'stop_triggered').map((s) => s.orderId)).toEqual([2, 3, 1]);
    const level = e.snapshot().book.filter((o) => o.price === '10000');
    expect(level.map((o) => o.id)).toEqual([2, 3, 1]);
    expect(e.order(4)).toMatchObject({ status: 'stop' });
  });

  it('a triggered stop trades, and its trades can trigger further stops (cascade)', () => {
    const e = engine();
    ok(e, limit(1, 'm', 'sell', 10_200n, 10n));
    ok(e, limit(2, 'm', 'sell', 10_400n, 10n));
    ok(e, stop(3, 'a', 'buy', 10_100n, 10_400n, 10n));
    ok(e, stop(4, 'b', 'buy', 10_300n, 10_400n, 10n));
    const events = ok(e, market(5, 't', 'buy', 1n, 1_000_000n));
    const label = (ev: (typeof events)[number]) =>
      ev.type === 'trade' ? `trade ${ev.amount}@${ev.price}` : `${ev.type}:${ev.orderId}`;
    expect(events.map(label)).toEqual([
      'accepted:5',
      'trade 1@10200',
      'stop_triggered:3',
      'done:5',
      'trade 9@10200',
      'done:1',
      'trade 1@10400',
      'stop_triggered:4',
      'done:3',
      'trade 9@10400',
      'done:2',
    ]);
    expect(e.order(4)).toMatchObject({ status: 'open', remaining: 1n });
  });

  it('cancel of a waiting stop releases its lock', () => {
    const e = engine();
    ok(e, stop(1, 'a', 'sell', 9_000n, 8_900n, 70n));
    const [done] = ofType(ok(e, cancel(1)), 'done');
    expect(done).toMatchObject({ reason: 'cancelled', releaseAsset: 'base', release: 70n });
    expect(ofType(tradeAt(e, 10, 8_000n), 'stop_triggered')).toHaveLength(0);
  });
});
