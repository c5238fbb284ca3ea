import type { EngineEvent } from '../matching/types.js';
import type { BookView, LiveOrders } from './book-view.js';
import type { LevelChanges } from './level-book.js';
import type { TradingMarket } from './markets.js';
import type { OrderRow, TradeRow } from './store.js';

/**
 * What one committed batch of a market changed, for followers kept in memory (rolling market
 * statistics, the live feed). Published after the batch's statement committed, in commit order
 * per market, so a follower never sees something that may still roll back.
 */
export interface CommittedBatch {
  readonly market: TradingMarket;
  /** The writer's command sequence number after the batch (batches of one market only grow it). */
  readonly seq: number;
  /**
   * The sequence number before the batch (`seq` less the batch's commands): the batches of a market
   * chain `prevSeq` to the previous one's `seq`, the same on every node of a cluster (the log's rows).
   */
  readonly prevSeq: number;
  /** Trades the batch made, in the order they happened. */
  readonly trades: readonly TradeRow[];
  /** Orders the batch created or changed, as stored once it committed. */
  readonly orders: readonly OrderRow[];
  /** Available funds by `account:currency` of every balance the batch changed. */
  readonly balances: ReadonlyMap<string, bigint>;
  /**
   * The book levels the batch changed, as it left them (`volume` 0: gone): applied in order to the
   * committed book before the batch, they give the committed book after it (orders/level-book.ts).
   */
  readonly levels: LevelChanges;
  /** The last trade price as the batch left it. */
  readonly lastPrice: bigint | null;
  /**
   * The matching engine's events of the batch's commands, in order (the live feed's order-by-order
   * book); empty when `book` is given instead.
   */
  readonly events: readonly EngineEvent[];
  /** The whole committed book, instead of `levels`, when the levels changed are not known (recovered). */
  readonly book?: BookView;
  /** With `book`: the live orders of that book, instead of `events`. */
  readonly live?: LiveOrders;
  /**
   * The batch's statement failed without an answer (the connection broke) and the rebuild that
   * followed found it logged: it committed after all. Its trades and book are exact; `orders` holds
   * only the orders it created, `balances` is empty (the statement's answer never came) and `book`
   * holds the whole book as rebuilt.
   */
  readonly recovered?: true;
  /**
   * A batch another node wrote, followed from the log without its feed (its owner logged none: no
   * node asked for it when it committed, 066_feed_wanted.sql): `trades`, `orders` and `balances` are
   * empty although the batch may have had some; `levels` are exact. Followers that show them read
   * them again from storage or tell their clients to.
   */
  readonly feedMissing?: true;
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

  /** Whether anyone follows (the writer keeps each batch's level changes only then). */
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
