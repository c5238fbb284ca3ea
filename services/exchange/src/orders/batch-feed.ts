import {
  type BalanceRecord,
  type OrderRecord,
  type OrderRow,
  orderOf,
  orderRecord,
  type TradeRow,
} from './store.js';

// What a cluster node logs beside a batch's commands for the live feed (065_feed_log.sql), and how a
// node following the market reads it back: the trades, orders and balances of the batch exactly as
// the owner's CommittedBatch holds them, so every node publishes the same frames.

/** A trade as logged: amounts as decimal text. */
interface TradeRecord {
  id: number;
  market: string;
  price: string;
  amount: string;
  quote: string;
  takerSide: TradeRow['takerSide'];
  buyOrderId: number;
  sellOrderId: number;
  buyAccount: number;
  sellAccount: number;
  buyerFee: string;
  sellerFee: string;
  createdAt: number;
}

/** The JSON the owner sends with a batch (the rest is added by the batch's statement). */
export function encodeBatchFeed(
  trades: readonly TradeRow[],
  created: readonly OrderRow[],
): { trades: string; created: string } {
  const tradeRecords: TradeRecord[] = trades.map((t) => ({
    id: t.id,
    market: t.market,
    price: t.price.toString(),
    amount: t.amount.toString(),
    quote: t.quote.toString(),
    takerSide: t.takerSide,
    buyOrderId: t.buyOrderId,
    sellOrderId: t.sellOrderId,
    buyAccount: t.buyAccount,
    sellAccount: t.sellAccount,
    buyerFee: t.buyerFee.toString(),
    sellerFee: t.sellerFee.toString(),
    createdAt: t.createdAt,
  }));
  return { trades: JSON.stringify(tradeRecords), created: JSON.stringify(created.map(orderRecord)) };
}

/** What a logged batch changed, as the owner published it. */
export interface BatchFeed {
  readonly trades: TradeRow[];
  /** The older orders the batch changed, then the orders it created (the owner's order: flight.ts). */
  readonly orders: OrderRow[];
  readonly balances: Map<string, bigint>;
}

interface BatchFeedRecord {
  trades?: TradeRecord[];
  created?: OrderRecord[];
  changed?: OrderRecord[];
  balances?: BalanceRecord[];
}

/** Reads the `feed` column of a log row (undefined for rows of a single process). */
export function decodeBatchFeed(value: unknown): BatchFeed | undefined {
  if (value === null || value === undefined) return undefined;
  const record = (typeof value === 'string' ? JSON.parse(value) : value) as BatchFeedRecord;
  const trades = (record.trades ?? []).map(
    (t): TradeRow => ({
      ...t,
      price: BigInt(t.price),
      amount: BigInt(t.amount),
      quote: BigInt(t.quote),
      buyerFee: BigInt(t.buyerFee),
      sellerFee: BigInt(t.sellerFee),
    }),
  );
  const orders = new Map<number, OrderRow>();
  for (const row of record.changed ?? []) orders.set(Number(row.id), orderOf(row));
  for (const row of record.created ?? []) orders.set(Number(row.id), orderOf(row));
  const balances = new Map<string, bigint>();
  for (const row of record.balances ?? [])
    balances.set(`${row.account_id}:${row.currency}`, BigInt(row.available));
  return { trades, orders: [...orders.values()], balances };
}
