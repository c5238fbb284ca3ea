import { describe, expect, it } from 'vitest';
import { engine, limit, market, ofType, ok } from './fixtures.js';

describe('self-trade prevention: cancel the resting (oldest) order', () => {
  it('cancels the own resting order, releases its lock, and the taker goes on to the next maker', () => {
    const e = engine();
    ok(e, limit(1, 'a', 'sell', 10_000n, 100n));
    ok(e, limit(2, 'b', 'sell', 10_000n, 100n));
    const events = ok(e, limit(3, 'a', 'buy', 10_000n, 150n));
    expect(events.map((ev) => ev.type)).toEqual(['accepted', 'done', 'trade', 'done']);
    expect(events[1]).toMatchObject({
      orderId: 1,
      reason: 'self_trade_prevented',
      status: 'cancelled',
      remaining: 100n,
      releaseAsset: 'base',
      release: 100n,
    });
    expect(events[2]).toMatchObject({ sellOrderId: 2, buyOrderId: 3, amount: 100n });
    expect(e.order(1)).toEqual({ status: 'cancelled' });
    expect(e.order(3)).toMatchObject({ status: 'open', remaining: 50n });
  });

  it('applies to market orders too, and never produces a trade between one account', () => {
    const e = engine();
    ok(e, limit(1, 'a', 'buy', 10_000n, 100n));
    const events = ok(e, market(2, 'a', 'sell', 50n));
    expect(ofType(events, 'trade')).toHaveLength(0);
    expect(ofType(events, 'done').map((d) => [d.orderId, d.reason, d.release])).toEqual([
      [1, 'self_trade_prevented', 10_000n * 100n],
      [2, 'no_liquidity', 50n],
    ]);
  });
});

describe('fees', () => {
  it('are charged in the received currency at the maker and taker rates, rounded down', () => {
    // maker 0.1 %, taker 0.2 %
    const e = engine({ makerFeePpm: 1_000, takerFeePpm: 2_000 });
    ok(e, limit(1, 'maker', 'sell', 12_345n, 999n));
    const [trade] = ofType(ok(e, limit(2, 'taker', 'buy', 12_345n, 999n)), 'trade');
    // Taker buys: receives 999 base, pays floor(999 * 0.002) = 1 base. Maker sells: receives
    // 12,332,655 quote, pays floor(12,332,655 * 0.001) = 12,332 quote.
    expect(trade).toMatchObject({ takerSide: 'buy', quote: 12_332_655n, buyerFee: 1n, sellerFee: 12_332n });
  });

  it('swap roles when the taker sells', () => {
    const e = engine({ makerFeePpm: 1_000, takerFeePpm: 2_000 });
    ok(e, limit(1, 'maker', 'buy', 10_000n, 10_000n));
    const [trade] = ofType(ok(e, limit(2, 'taker', 'sell', 10_000n, 10_000n)), 'trade');
    expect(trade).toMatchObject({ takerSide: 'sell', buyerFee: 10n, sellerFee: 200_000n });
  });

  it('are zero for a zero rate and for amounts too small to owe a whole minor unit', () => {
    const free = engine({ makerFeePpm: 0, takerFeePpm: 0 });
    ok(free, limit(1, 'm', 'sell', 10_000n, 10n));
    expect(ofType(ok(free, limit(2, 't', 'buy', 10_000n, 10n)), 'trade')[0]).toMatchObject({
      buyerFee: 0n,
      sellerFee: 0n,
    });
    const e = engine({ makerFeePpm: 1_000, takerFeePpm: 2_000 });
    ok(e, limit(1, 'm', 'sell', 10_000n, 10n));
    expect(ofType(ok(e, limit(2, 't', 'buy', 10_000n, 10n)), 'trade')[0]).toMatchObject({ buyerFee: 0n });
  });
});
