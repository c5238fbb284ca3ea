import { describe, expect, it } from 'vitest';
import type { Command } from '../../src/matching/types.js';
import { byQuote, cancel, engine, limit, market, ok, refused, stop } from './fixtures.js';

describe('order validation refuses with a code and changes nothing', () => {
  const e = engine({
    tickSize: 5n,
    lotSize: 10n,
    minAmount: 20n,
    minTotal: 1_000_000n,
    maxAmount: 1_000_000n,
  });

  it.each([
    ['INVALID_ORDER_ID', limit(0, 'a', 'buy', 10_000n, 100n)],
    ['INVALID_ORDER_ID', limit(1.5, 'a', 'buy', 10_000n, 100n)],
    ['INVALID_SIDE', limit(1, 'a', 'hold' as 'buy', 10_000n, 100n)],
    ['INVALID_PRICE', limit(1, 'a', 'buy', 0n, 100n)],
    ['INVALID_PRICE', limit(1, 'a', 'buy', -5n, 100n)],
    ['INVALID_PRICE', limit(1, 'a', 'buy', 2n ** 60n, 100n)],
    ['PRICE_PRECISION', limit(1, 'a', 'buy', 10_001n, 100n)],
    ['PRICE_PRECISION', stop(1, 'a', 'buy', 10_003n, 10_000n, 100n)],
    ['INVALID_AMOUNT', limit(1, 'a', 'buy', 10_000n, 0n)],
    ['AMOUNT_PRECISION', limit(1, 'a', 'buy', 10_000n, 105n)],
    ['AMOUNT_TOO_SMALL', limit(1, 'a', 'buy', 10_000n, 10n)],
    ['AMOUNT_TOO_LARGE', limit(1, 'a', 'buy', 10_000n, 1_000_010n)],
    ['TOTAL_TOO_SMALL', limit(1, 'a', 'sell', 10_000n, 90n)],
    ['INVALID_BUDGET', market(1, 'a', 'buy', 100n)],
    ['INVALID_BUDGET', market(1, 'a', 'buy', 100n, 0n)],
    ['INVALID_AMOUNT', byQuote(1, 'a', 'buy', 0n)],
    ['TOTAL_TOO_SMALL', byQuote(1, 'a', 'buy', 999_999n)],
    ['INVALID_BUDGET', byQuote(1, 'a', 'sell', 1_000_000n)],
    ['INVALID_COMMAND', { type: 'modify', id: 1, time: 0 } as unknown as Command],
  ])('%s', (code, cmd) => {
    refused(e, cmd, code);
  });

  it('accepts the boundary values', () => {
    expect(e.apply(limit(1, 'a', 'buy', 50_000n, 20n)).ok).toBe(true);
    expect(e.apply(byQuote(2, 'a', 'buy', 1_000_000n)).ok).toBe(true);
  });

  it('refuses a reused order id, live or finished', () => {
    const f = engine();
    ok(f, limit(5, 'a', 'buy', 10_000n, 100n));
    refused(f, limit(5, 'b', 'sell', 20_000n, 100n), 'DUPLICATE_ORDER_ID');
    ok(f, limit(2, 'a', 'buy', 10_000n, 100n));
    ok(f, cancel(2));
    refused(f, limit(2, 'a', 'buy', 10_000n, 100n), 'DUPLICATE_ORDER_ID');
  });

  it('rejects a market spec that makes no sense when the engine is built', () => {
    expect(() => engine({ tickSize: 0n })).toThrow(/invalid/);
    expect(() => engine({ takerFeePpm: 1_000_000 })).toThrow(/fee/);
    expect(() => engine({ pricePrecision: -1 })).toThrow(/precision/);
  });
});

describe('cancel', () => {
  it('of an unknown order is ORDER_NOT_FOUND', () => {
    refused(engine(), cancel(77), 'ORDER_NOT_FOUND');
  });

  it('of a filled order is ORDER_ALREADY_FILLED, both maker and taker', () => {
    const e = engine();
    ok(e, limit(1, 'a', 'sell', 10_000n, 100n));
    ok(e, limit(2, 'b', 'buy', 10_000n, 100n));
    refused(e, cancel(1), 'ORDER_ALREADY_FILLED');
    refused(e, cancel(2, 'b'), 'ORDER_ALREADY_FILLED');
  });

  it('of a cancelled order is ORDER_ALREADY_CANCELLED (also after self-trade or partial fill)', () => {
    const e = engine();
    ok(e, limit(1, 'a', 'sell', 10_000n, 100n));
    ok(e, cancel(1));
    refused(e, cancel(1), 'ORDER_ALREADY_CANCELLED');
    ok(e, limit(2, 'a', 'sell', 10_000n, 100n));
    ok(e, market(3, 'a', 'buy', 10n, 10n ** 9n));
    refused(e, cancel(2), 'ORDER_ALREADY_CANCELLED');
    ok(e, limit(4, 'b', 'sell', 10_000n, 100n));
    ok(e, market(5, 'c', 'buy', 30n, 10n ** 9n));
    const [done] = ok(e, cancel(4));
    expect(done).toMatchObject({ type: 'done', reason: 'cancelled', remaining: 70n, release: 70n });
    refused(e, cancel(4), 'ORDER_ALREADY_CANCELLED');
  });

  it('of a market order after it finished reports its final status', () => {
    const e = engine();
    ok(e, market(1, 'a', 'sell', 10n));
    refused(e, cancel(1), 'ORDER_ALREADY_CANCELLED');
  });

  it("of another account's order is ORDER_NOT_FOUND and leaves the order alone", () => {
    const e = engine();
    ok(e, limit(1, 'a', 'buy', 10_000n, 100n));
    refused(e, cancel(1, 'mallory'), 'ORDER_NOT_FOUND');
    expect(e.order(1)).toMatchObject({ status: 'open' });
    const [done] = ok(e, cancel(1, 'a'));
    expect(done).toMatchObject({ releaseAsset: 'quote', release: 1_000_000n, status: 'cancelled' });
  });
});
