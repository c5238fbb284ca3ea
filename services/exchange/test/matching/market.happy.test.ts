import { describe, expect, it } from 'vitest';
import { byQuote, engine, limit, market, ofType, ok } from './fixtures.js';

/** Asks of 100 at 100.00, 100 at 101.00 and 100 at 102.00 (price minor units, amount minor units). */
function withAsks() {
  const e = engine({ makerFeePpm: 0, takerFeePpm: 0 });
  ok(e, limit(1, 'm', 'sell', 10_000n, 100n));
  ok(e, limit(2, 'm', 'sell', 10_100n, 100n));
  ok(e, limit(3, 'm', 'sell', 10_200n, 100n));
  return e;
}

function withBids() {
  const e = engine({ makerFeePpm: 0, takerFeePpm: 0 });
  ok(e, limit(1, 'm', 'buy', 10_200n, 100n));
  ok(e, limit(2, 'm', 'buy', 10_100n, 100n));
  ok(e, limit(3, 'm', 'buy', 10_000n, 100n));
  return e;
}

describe('market orders by base amount', () => {
  it('a sell walks the bids best first and locks exactly its amount', () => {
    const e = withBids();
    const events = ok(e, market(9, 't', 'sell', 150n));
    expect(ofType(events, 'accepted')[0]).toMatchObject({ kind: 'market', lockAsset: 'base', lock: 150n });
    expect(ofType(events, 'trade').map((t) => [t.price, t.amount])).toEqual([
      [10_200n, 100n],
      [10_100n, 50n],
    ]);
    expect(ofType(events, 'done').at(-1)).toMatchObject({ orderId: 9, reason: 'filled', release: 0n });
  });

  it('a sell larger than the book ends with no_liquidity and releases the rest', () => {
    const e = withBids();
    const done = ofType(ok(e, market(9, 't', 'sell', 500n)), 'done').at(-1);
    expect(done).toMatchObject({ orderId: 9, reason: 'no_liquidity', status: 'cancelled', remaining: 200n });
    expect(done).toMatchObject({ releaseAsset: 'base', release: 200n });
  });

  it('a buy locks its budget, spends what it trades and releases the rest', () => {
    const e = withAsks();
    const events = ok(e, market(9, 't', 'buy', 150n, 5_000_000n));
    expect(ofType(events, 'accepted')[0]).toMatchObject({ lockAsset: 'quote', lock: 5_000_000n });
    const spent = ofType(events, 'trade').reduce((sum, t) => sum + t.quote, 0n);
    expect(spent).toBe(10_000n * 100n + 10_100n * 50n);
    expect(ofType(events, 'done').at(-1)).toMatchObject({ reason: 'filled', release: 5_000_000n - spent });
  });

  it('a buy stops when its budget cannot pay for one more lot', () => {
    const e = withAsks();
    const budget = 10_000n * 100n + 10_100n * 10n + 5n;
    const events = ok(e, market(9, 't', 'buy', 300n, budget));
    expect(ofType(events, 'trade').map((t) => t.amount)).toEqual([100n, 10n]);
    expect(ofType(events, 'done').at(-1)).toMatchObject({
      reason: 'budget_exhausted',
      remaining: 190n,
      release: 5n,
    });
    expect(e.order(2)).toMatchObject({ remaining: 90n });
  });

  it('on an empty book is accepted and immediately done with its whole lock released', () => {
    const e = engine();
    const events = ok(e, market(1, 't', 'buy', 10n, 1_000n));
    expect(events.map((ev) => ev.type)).toEqual(['accepted', 'done']);
    expect(events[1]).toMatchObject({ reason: 'no_liquidity', release: 1_000n });
  });
});

describe('market orders by quote amount', () => {
  it('a buy spends up to the quote and never more', () => {
    const e = withAsks();
    const quote = 10_000n * 100n + 10_100n * 20n + 7_000n;
    const events = ok(e, byQuote(9, 't', 'buy', quote));
    expect(ofType(events, 'accepted')[0]).toMatchObject({
      kind: 'market_by_quote',
      lock: quote,
      amount: null,
    });
    const trades = ofType(events, 'trade');
    // 7,000 left cannot buy one lot at 101.00 (10,100 per lot).
    expect(trades.map((t) => t.amount)).toEqual([100n, 20n]);
    expect(ofType(events, 'done').at(-1)).toMatchObject({
      reason: 'filled',
      status: 'filled',
      release: 7_000n,
    });
  });

  it('a sell sells until it has received up to the quote, within its base budget', () => {
    const e = withBids();
    const events = ok(e, byQuote(9, 't', 'sell', 10_200n * 100n + 10_100n * 30n, 1_000n));
    expect(ofType(events, 'accepted')[0]).toMatchObject({ lockAsset: 'base', lock: 1_000n });
    expect(ofType(events, 'trade').map((t) => t.amount)).toEqual([100n, 30n]);
    expect(ofType(events, 'done').at(-1)).toMatchObject({
      reason: 'filled',
      releaseAsset: 'base',
      release: 870n,
    });
  });

  it('a sell that runs out of base budget ends budget_exhausted', () => {
    const e = withBids();
    const done = ofType(ok(e, byQuote(9, 't', 'sell', 100_000_000n, 120n)), 'done').at(-1);
    expect(done).toMatchObject({ reason: 'budget_exhausted', release: 0n });
  });

  it('a buy larger than the book ends no_liquidity', () => {
    const e = withAsks();
    const done = ofType(ok(e, byQuote(9, 't', 'buy', 100_000_000n)), 'done').at(-1);
    expect(done).toMatchObject({ reason: 'no_liquidity', release: 100_000_000n - 10_100n * 300n });
  });

  it('respects the lot size when converting quote to amount', () => {
    const e = engine({ lotSize: 10n, makerFeePpm: 0, takerFeePpm: 0 });
    ok(e, limit(1, 'm', 'sell', 10_000n, 100n));
    const trades = ofType(ok(e, byQuote(2, 't', 'buy', 10_000n * 25n)), 'trade');
    expect(trades.map((t) => t.amount)).toEqual([20n]);
  });
});
