import { type BalanceRecord, type OrderRecord, type OrderRow, orderOf, type TradeRow } from './store.js';

// How a node following a market reads back what the owner's batch statement logged beside its
// commands for the live feed (065_feed_log.sql, built by store.ts `CLUSTER_LOG`): the trades, orders
// and balances of the batch exactly as the owner's CommittedBatch holds them, so every node publishes
// the same frames.

/** A trade as logged: amounts as decimal text (keys as store.ts `CLUSTER_LOG` writes them). */
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
