import { describe, expect, it } from 'vitest';
import { engine, limit, ofType, ok } from './fixtures.js';

describe('limit orders', () => {
  it('rest when nothing crosses and show in the book aggregated per level', () => {
    const e = engine();
    ok(e, limit(1, 'a', 'buy', 9_900n, 1_000n));
    ok(e, limit(2, 'b', 'buy', 9_900n, 500n));
    ok(e, limit(3, 'c', 'buy', 9_800n, 200n));
    ok(e, limit(4, 'd', 'sell', 10_100n, 300n));
    expect(e.depth()).toEqual({
      bids: [
        [9_900n, 1_500n, 2],
        [9_800n, 200n, 1],
      ],
      asks: [[10_100n, 300n, 1]],
    });
    expect(e.top()).toEqual({ bid: [9_900n, 1_500n, 2], ask: [10_100n, 300n, 1] });
    expect(e.order(2)).toMatchObject({ status: 'open', side: 'buy', price: 9_900n, remaining: 500n });
  });

  it('match the best price first, then the oldest order at that price', () => {
    const e = engine();
    ok(e, limit(1, 'a', 'sell', 10_100n, 100n));
    ok(e, limit(2, 'b', 'sell', 10_000n, 100n));
    ok(e, limit(3, 'c', 'sell', 10_000n, 100n));
    const trades = ofType(ok(e, limit(4, 't', 'buy', 10_100n, 250n)), 'trade');
    expect(trades.map((t) => [t.sellOrderId, t.price, t.amount])).toEqual([
      [2, 10_000n, 100n],
      [3, 10_000n, 100n],
      [1, 10_100n, 50n],
    ]);
    expect(trades.every((t) => t.takerSide === 'buy' && t.buyOrderId === 4)).toBe(true);
    expect(e.order(1)).toMatchObject({ status: 'open', remaining: 50n });
    expect(e.order(4)).toEqual({ status: 'filled' });
  });

  it('trade at the maker price and release the buyer lock above it at once', () => {
    const e = engine();
    ok(e, limit(1, 'a', 'sell', 10_000n, 100n));
    const events = ok(e, limit(2, 'b', 'buy', 10_500n, 100n));
    const [accepted] = ofType(events, 'accepted');
    const [trade] = ofType(events, 'trade');
    expect(accepted).toMatchObject({ lockAsset: 'quote', lock: 10_500n * 100n });
    expect(trade).toMatchObject({ price: 10_000n, quote: 1_000_000n, buyerRelease: 500n * 100n });
    expect(ofType(events, 'done').map((d) => [d.orderId, d.reason, d.release])).toEqual([
      [1, 'filled', 0n],
      [2, 'filled', 0n],
    ]);
  });

  it('rest the unfilled remainder of a crossing order at its own price', () => {
    const e = engine();
    ok(e, limit(1, 'a', 'buy', 10_000n, 100n));
    const events = ok(e, limit(2, 'b', 'sell', 9_900n, 300n));
    expect(ofType(events, 'trade')).toHaveLength(1);
    expect(ofType(events, 'done').map((d) => d.orderId)).toEqual([1]);
    expect(e.depth()).toEqual({ bids: [], asks: [[9_900n, 200n, 1]] });
    expect(e.lastPrice).toBe(10_000n);
  });

  it('does not trade between orders that do not cross', () => {
    const e = engine();
    ok(e, limit(1, 'a', 'buy', 10_000n, 100n));
    expect(ofType(ok(e, limit(2, 'b', 'sell', 10_001n, 100n)), 'trade')).toHaveLength(0);
    expect(e.lastPrice).toBeNull();
  });

  it('numbers events in one increasing sequence and stamps the command time', () => {
    const e = engine();
    ok(e, limit(1, 'a', 'sell', 10_000n, 100n));
    const events = e.apply({
      type: 'limit',
      id: 2,
      account: 'b',
      side: 'buy',
      price: 10_000n,
      amount: 100n,
      time: 42,
    });
    if (!events.ok) throw new Error('refused');
    expect(events.events.map((ev) => ev.seq)).toEqual([2, 3, 4, 5]);
    expect(events.events.every((ev) => ev.time === 42 && ev.market === 'btcuah')).toBe(true);
  });
});
