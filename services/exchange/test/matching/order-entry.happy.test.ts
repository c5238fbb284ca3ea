import { describe, expect, it } from 'vitest';
import type { Command, LimitCommand } from '../../src/matching/types.js';
import { engine, limit, market, ofType, ok, refused } from './fixtures.js';

const opts = (cmd: Command, extra: Partial<LimitCommand>): Command => ({ ...cmd, ...extra }) as Command;
const amend = (id: number, change: { amount?: bigint; price?: bigint }): Command => ({
  type: 'amend',
  id,
  time: 2,
  ...change,
});

describe('time in force and post-only', () => {
  it('FOK fills whole, or ends with nothing traded and its whole lock released', () => {
    const e = engine();
    ok(e, limit(1, 'm', 'sell', 10_000n, 100n));
    const killed = ok(e, opts(limit(2, 't', 'buy', 10_000n, 150n), { tif: 'fok' }));
    expect(killed.map((x) => x.type)).toEqual(['accepted', 'done']);
    expect(killed[1]).toMatchObject({ reason: 'fok_not_filled', remaining: 150n, release: 10_000n * 150n });
    expect(e.order(1)).toMatchObject({ status: 'open', remaining: 100n });
    const filled = ok(e, opts(limit(3, 't', 'buy', 10_000n, 100n), { tif: 'fok' }));
    expect(ofType(filled, 'done').map((d) => [d.orderId, d.reason])).toEqual([
      [1, 'filled'],
      [3, 'filled'],
    ]);
  });

  it('IOC trades what crosses and cancels the rest', () => {
    const e = engine();
    ok(e, limit(1, 'm', 'sell', 10_000n, 100n));
    const events = ok(e, opts(limit(2, 't', 'buy', 10_100n, 150n), { tif: 'ioc' }));
    const done = ofType(events, 'done').find((d) => d.orderId === 2);
    expect(done).toMatchObject({ reason: 'ioc_rest_cancelled', remaining: 50n, release: 10_100n * 50n });
    expect(e.order(2)).toEqual({ status: 'cancelled' });
  });

  it('post-only that would take is refused and changes nothing; one that would not rests', () => {
    const e = engine();
    ok(e, limit(1, 'm', 'sell', 10_000n, 100n));
    refused(e, opts(limit(2, 't', 'buy', 10_000n, 10n), { postOnly: true }), 'POST_ONLY_WOULD_TAKE');
    expect(e.order(2)).toBeUndefined();
    ok(e, opts(limit(2, 't', 'buy', 9_995n, 10n), { postOnly: true }));
    expect(e.order(2)).toMatchObject({ status: 'open' });
  });
});

describe('self-trade prevention modes (the taker decides)', () => {
  const setup = () => {
    const e = engine();
    ok(e, limit(1, 'a', 'sell', 10_000n, 100n));
    ok(e, limit(2, 'b', 'sell', 10_000n, 100n));
    return e;
  };
  it('expire_taker ends the taker, the maker stays', () => {
    const e = setup();
    const events = ok(e, opts(limit(3, 'a', 'buy', 10_000n, 150n), { stp: 'expire_taker' }));
    expect(ofType(events, 'trade')).toHaveLength(0);
    expect(ofType(events, 'done')).toMatchObject([
      { orderId: 3, reason: 'self_trade_prevented', stp: 'expire_taker', release: 10_000n * 150n },
    ]);
    expect(e.order(1)).toMatchObject({ status: 'open' });
  });
  it('expire_both ends both', () => {
    const e = setup();
    const events = ok(e, opts(limit(3, 'a', 'buy', 10_000n, 150n), { stp: 'expire_both' }));
    expect(ofType(events, 'done').map((d) => [d.orderId, d.reason, d.stp])).toEqual([
      [1, 'self_trade_prevented', 'expire_both'],
      [3, 'self_trade_prevented', 'expire_both'],
    ]);
  });
  it('decrement reduces both by the overlap without a trade; the smaller expires', () => {
    const e = setup();
    const events = ok(e, opts(limit(3, 'a', 'buy', 10_000n, 60n), { stp: 'decrement' }));
    expect(ofType(events, 'trade')).toHaveLength(0);
    expect(ofType(events, 'amended')).toMatchObject([
      {
        orderId: 1,
        reason: 'self_trade_prevented',
        stp: 'decrement',
        remaining: 40n,
        amount: 40n,
        lockDelta: -60n,
      },
    ]);
    expect(ofType(events, 'done')).toMatchObject([
      { orderId: 3, reason: 'self_trade_prevented', stp: 'decrement', remaining: 0n, release: 10_000n * 60n },
    ]);
  });
  it('none lets the trade happen, flagged', () => {
    const e = setup();
    const events = ok(e, opts(market(3, 'a', 'buy', 50n, 10_000_000n), { stp: 'none' }));
    expect(ofType(events, 'trade')).toMatchObject([{ sellOrderId: 1, buyOrderId: 3, selfTrade: true }]);
  });
});

describe('amend', () => {
  it('a smaller amount keeps the queue place; a larger one or a new price moves to the back', () => {
    const e = engine();
    ok(e, limit(1, 'a', 'buy', 10_000n, 100n));
    ok(e, limit(2, 'b', 'buy', 10_000n, 100n));
    ok(e, market(3, 'c', 'sell', 30n));
    // Order 1 filled 30, 70 left: new total 80 leaves 50, same place.
    const kept = ok(e, amend(1, { amount: 80n }));
    expect(kept).toMatchObject([
      { type: 'amended', priority: 'kept', amount: 80n, remaining: 50n, lockDelta: -(10_000n * 20n) },
    ]);
    expect(e.snapshot().book.map((o) => o.id)).toEqual([1, 2]);
    const moved = ok(e, amend(1, { amount: 200n }));
    expect(moved).toMatchObject([{ priority: 'moved', remaining: 170n, lockDelta: 10_000n * 120n }]);
    expect(e.snapshot().book.map((o) => o.id)).toEqual([2, 1]);
    ok(e, amend(2, { price: 10_005n }));
    expect(e.snapshot().book.map((o) => [o.id, o.price])).toEqual([
      [2, '10005'],
      [1, '10000'],
    ]);
    refused(e, amend(1, { amount: 30n }), 'AMEND_BELOW_FILLED');
    ok(e, limit(4, 'd', 'sell', 10_010n, 5n));
    refused(e, amend(2, { price: 10_010n }), 'AMEND_WOULD_TAKE');
  });
});
