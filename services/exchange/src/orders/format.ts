import { averagePrice, type TradingMarket } from './markets.js';
import type { OrderRow, TradeRow } from './store.js';

/** Response shapes of orders and trades (v2 Peatio objects, v3 positional arrays). */

export type V3Order = [
  number,
  null,
  null,
  string,
  number,
  number,
  string,
  string,
  'LIMIT' | 'MARKET',
  null,
  null,
  null,
  null,
  string,
  null,
  null,
  string,
  string,
];

/**
 * The spec's 11 items. The self-trade flag (issue 43) is not appended: the spec fixes the array at 11
 * items and a client may check that; v2's trade objects and the feed's frames carry `self_trade`.
 */
export type V3Trade = [number, string, number, number, string, string, null, null, 1 | -1, string, string];

/** The base amount of an order: its amount, or what it executed for a market order by quote. */
function originalAmount(order: OrderRow): bigint {
  return order.amount ?? order.executed;
}

/** Volume not executed: still offered while the order waits, never executed once it is finished. */
function remaining(order: OrderRow): bigint {
  return originalAmount(order) - order.executed;
}

function avg(market: TradingMarket, order: OrderRow): string {
  return market.formatPrice(averagePrice(order.funds, order.executed));
}

export function v3Status(order: OrderRow): string {
  if (order.state === 'wait') return 'ACTIVE';
  return order.state === 'done' ? 'EXECUTED' : 'CANCELED';
}

export function v3Order(market: TradingMarket, order: OrderRow): V3Order {
  const original = market.formatAmount(originalAmount(order));
  return [
    order.id,
    null,
    null,
    order.market,
    order.createdAt,
    order.updatedAt,
    market.formatAmount(remaining(order)),
    order.side === 'sell' && original !== '0' ? `-${original}` : original,
    order.kind === 'limit' || order.kind === 'limit_stop_loss' ? 'LIMIT' : 'MARKET',
    null,
    null,
    null,
    null,
    v3Status(order),
    null,
    null,
    order.price === null ? '0' : market.formatPrice(order.price),
    avg(market, order),
  ];
}

export function v3Trade(market: TradingMarket, trade: TradeRow, order: OrderRow): V3Trade {
  const buyer = trade.buyOrderId === order.id;
  const taker = trade.takerSide === (buyer ? 'buy' : 'sell');
  return [
    trade.id,
    trade.market,
    trade.createdAt,
    order.id,
    market.formatAmount(trade.amount),
    market.formatPrice(trade.price),
    null,
    null,
    taker ? -1 : 1,
    buyer ? market.formatAmount(trade.buyerFee) : market.formatTotal(trade.sellerFee),
    buyer ? market.base : market.quote,
  ];
}

export function cancelledOrder(market: TradingMarket, order: OrderRow) {
  return {
    id: order.id,
    side: order.side,
    type: order.kind === 'limit' || order.kind === 'limit_stop_loss' ? 'limit' : 'market',
    price: order.price === null ? '0' : market.formatPrice(order.price),
    avg_execution_price: avg(market, order),
    symbol: order.market,
    timestamp: order.updatedAt,
    original_amount: market.formatAmount(originalAmount(order)),
    remaining_amount: market.formatAmount(remaining(order)),
    executed_amount: market.formatAmount(order.executed),
    is_cancelled: null,
    is_hidden: null,
    is_live: null,
    was_forced: null,
    exchange: null,
  };
}

const iso = (ms: number): string => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

/** The Peatio order object; `state` may be overridden (order/delete answers with the pre-cancel state). */
export function v2Order(market: TradingMarket, order: OrderRow, state: OrderRow['state'] = order.state) {
  return {
    id: order.id,
    side: order.side,
    ord_type: order.kind,
    price: order.price === null ? null : market.formatPrice(order.price),
    avg_price: avg(market, order),
    state,
    market: order.market,
    created_at: iso(order.createdAt),
    volume: market.formatAmount(originalAmount(order)),
    remaining_volume: market.formatAmount(remaining(order)),
    executed_volume: market.formatAmount(order.executed),
    trades_count: order.tradesCount,
    // Why self-trade prevention, FOK or IOC ended or reduced it (null for every other order).
    reason: order.reason ?? null,
    stp: order.stp ?? null,
  };
}

export function v2Trade(market: TradingMarket, trade: TradeRow, accountId?: number) {
  const mine = accountId !== undefined;
  const buyer = mine && trade.buyAccount === accountId;
  return {
    id: trade.id,
    price: market.formatPrice(trade.price),
    volume: market.formatAmount(trade.amount),
    funds: market.formatTotal(trade.quote),
    market: trade.market,
    created_at: iso(trade.createdAt),
    side: mine ? (buyer ? 'bid' : 'ask') : null,
    ...(mine ? { order_id: buyer ? trade.buyOrderId : trade.sellOrderId } : {}),
    self_trade: trade.selfTrade === true,
  };
}
