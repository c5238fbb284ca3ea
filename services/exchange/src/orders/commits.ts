import type { TradingMarket } from './markets.js';
import type { OrderRow, TradeRow } from './store.js';
import type { BookView } from './writer.js';

/**
 * What one committed batch of a market changed, for followers kept in memory (rolling market
 * statistics, the live feed). Published after the batch's statement committed, in commit order
 * per market, so a follower never sees something that may still roll back.
 */
export interface CommittedBatch {
  readonly market: TradingMarket;
  /** The writer's command sequence number after the batch (batches of one market only grow it). */
  readonly seq: number;
  /** Trades the batch made, in the order they happened. */
  readonly trades: readonly TradeRow[];
  /** Orders the batch created or changed, as stored once it committed. */
  readonly orders: readonly OrderRow[];
  /** Available funds by `account:currency` of every balance the batch changed. */
  readonly balances: ReadonlyMap<string, bigint>;
  /** The committed book as this batch left it. */
  readonly book: BookView;
  /**
   * The batch's statement failed without an answer (the connection broke) and the rebuild that
   * followed found it logged: it committed after all. Its trades and book are exact; `orders` holds
   * only the orders it created and `balances` is empty (the statement's answer never came).
   */
  readonly recovered?: true;
}

export type CommitListener = (batch: CommittedBatch) => void;

/** The followers of committed batches; a follower that throws is reported and never stops order entry. */
export class CommitFeed {
  private readonly listeners = new Set<CommitListener>();

  constructor(private readonly onListenerError: (error: unknown) => void = () => {}) {}

  /** Adds a follower; returns the function that removes it. */
  subscribe(listener: CommitListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Whether anyone follows (the writer keeps a copy of the book per batch only then). */
  get followed(): boolean {
    return this.listeners.size > 0;
  }

  publish(batch: CommittedBatch): void {
    for (const listener of this.listeners) {
      try {
        listener(batch);
      } catch (error) {
        this.onListenerError(error);
      }
    }
  }
}
