import { describe, expect, it } from 'vitest';
import type { PrivateBatch } from '../../src/feed/journal.js';
import { privateFrames } from '../../src/feed/private-frames.js';
import { tradingMarkets } from '../../src/orders/markets.js';
import type { OrderRow, TradeRow } from '../../src/orders/store.js';
import { reference } from '../support/targets.js';

const market = tradingMarkets(reference, { makerFeePpm: 1_000, takerFeePpm: 2_000 }).get('btcuah')!;

const order = (id: number, extra: Partial<OrderRow>): OrderRow => ({
  id,
  market: 'btcuah',
  accountId: 7,
  side: 'sell',
  kind: 'limit',
  price: 100n,
  stopPrice: null,
  amount: 10n,
  quote: null,
  executed: 0n,
  funds: 0n,
  tradesCount: 0,
  state: 'cancel',
  createdAt: 1,
  updatedAt: 2,
  ...extra,
});

const trade = (id: number, selfTrade: boolean): TradeRow => ({
  id,
  market: 'btcuah',
  price: 100n,
  amount: 1n,
  quote: 100n,
  takerSide: 'buy',
  buyOrderId: 1,
  sellOrderId: 2,
  buyAccount: 7,
  sellAccount: selfTrade ? 7 : 8,
  buyerFee: 0n,
  sellerFee: 0n,
  createdAt: 3,
  selfTrade,
});

/** Issue 43: the feed's private frames say what self-trade prevention did (docs/feed.md). */
describe('self-trade in private frames', () => {
  const batch: PrivateBatch = {
    market,
    seq: 5,
    trades: [trade(1, true), trade(2, false)],
    orders: [order(2, { reason: 'self_trade_prevented', stp: 'expire_maker' }), order(3, {})],
    balances: new Map(),
  } as unknown as PrivateBatch; // only the fields the frames read

  it('fills carry self_trade; order arrays end with reason and stp', () => {
    const fills = JSON.parse(
      privateFrames(reference, batch, 'fills', () => true)
        .get(7)!
        .toString(),
    );
    // The self-trade gives the account both sides; the other trade only its buy.
    expect(
      fills.fills.map((f: { trade_id: number; self_trade: boolean }) => [f.trade_id, f.self_trade]),
    ).toEqual([
      [1, true],
      [1, true],
      [2, false],
    ]);
    const orders = JSON.parse(
      privateFrames(reference, batch, 'orders', () => true)
        .get(7)!
        .toString(),
    );
    expect(orders.orders[0]).toHaveLength(20);
    expect(orders.orders[0].slice(18)).toEqual(['self_trade_prevented', 'expire_maker']);
    expect(orders.orders[1].slice(18)).toEqual([null, null]);
  });
});
