import type { Sql } from '../db/database.js';
import type { CommittedBatch } from '../orders/commits.js';
import { LevelBook } from '../orders/level-book.js';
import { DAY_MS, type MarketSummary } from '../orders/market-data.js';
import type { TradingMarket } from '../orders/markets.js';
import type { OrderService } from '../orders/service.js';
import type { BookView } from '../orders/writer.js';
import { storedTradesSince } from './restore.js';
import { RollingDay, type WindowStats } from './rolling-day.js';

/** What the statistics follow: the markets, their writers' committed books, their committed batches. */
export type StatsSource = Pick<OrderService, 'markets' | 'writer' | 'commits'>;

interface Tracked {
  readonly market: TradingMarket;
  day: RollingDay;
  /**
   * While the window is read again from storage (a followed batch came without its trades): the
   * batches taken meanwhile, added to the new window once read; `again` when another such batch
   * came during the read (the read may have missed its trades).
   */
  reread?: { batches: CommittedBatch[]; again: boolean };
  /** The committed book as the last committed batch left it, kept from the batches' level changes. */
  readonly book: LevelBook;
  /** The command log's sequence number of that batch (the book's `x-book-seq`). */
  seq: number;
  /**
   * Grows whenever what this market shows may have changed (a batch committed, a trade left the
   * window), so that a reader can keep something derived from it (a serialised ticker) until then.
   */
  version: number;
}

/**
 * Market data kept in memory: per market the rolling 24 h trade statistics and the committed book,
 * followed from the writers' committed batches (orders/commits.ts), so a ticker costs no query.
 * Start-up restores the window from the stored trades of the last 24 h and the books from the
 * writers (rebuilt from the command log before this starts).
 */
export class MarketStats {
  private readonly tracked = new Map<string, Tracked>();
  private readonly order: string[] = [];
  private stopFollowing: () => void = () => {};

  private constructor(
    markets: Iterable<TradingMarket>,
    private readonly windowMs: number,
    orders: StatsSource,
    private readonly db: Sql,
    private readonly clock: () => number,
    private readonly onError: (error: unknown) => void,
  ) {
    for (const market of markets) {
      this.order.push(market.id);
      this.tracked.set(market.id, {
        market,
        day: new RollingDay(windowMs),
        book: new LevelBook(orders.writer(market.id)!.view()),
        seq: orders.writer(market.id)!.committedSeq,
        version: 0,
      });
    }
  }

  /**
   * Follows the committed batches first and only then reads the stored trades, keeping the batches
   * that commit meanwhile until the read is done: a trade is then either read or followed (or both,
   * and the window ignores the second copy by its id), never lost.
   */
  static async start(options: {
    readonly db: Sql;
    readonly orders: StatsSource;
    readonly clock: () => number;
    /** @default DAY_MS */
    readonly windowMs?: number;
    /** A window read again that failed (the old one is kept). */
    readonly onError?: (error: unknown) => void;
  }): Promise<MarketStats> {
    const windowMs = options.windowMs ?? DAY_MS;
    const stats = new MarketStats(
      options.orders.markets.values(),
      windowMs,
      options.orders,
      options.db,
      options.clock,
      options.onError ?? (() => {}),
    );
    const now = options.clock();
    let waiting: CommittedBatch[] | undefined = [];
    stats.stopFollowing = options.orders.commits.subscribe((batch) => {
      if (waiting) waiting.push(batch);
      else stats.take(batch);
    });
    try {
      for (const entry of stats.tracked.values()) entry.day = await stats.storedWindow(entry.market.id, now);
    } catch (error) {
      stats.close();
      throw error;
    }
    for (const batch of waiting) stats.take(batch);
    waiting = undefined;
    return stats;
  }

  /** Stops following the writers. */
  close(): void {
    this.stopFollowing();
  }

  private take(batch: CommittedBatch): void {
    const entry = this.tracked.get(batch.market.id);
    if (!entry) return;
    if (batch.feedMissing) this.reread(entry);
    if (entry.reread) entry.reread.batches.push(batch);
    else this.addTrades(entry.day, batch);
    if (batch.book) entry.book.replace(batch.book);
    else entry.book.apply(batch.levels, batch.lastPrice);
    if (batch.seq > entry.seq) entry.seq = batch.seq;
    entry.version += 1;
  }

  private addTrades(day: RollingDay, batch: CommittedBatch): void {
    for (const trade of batch.trades) {
      day.add({
        id: trade.id,
        createdAt: trade.createdAt,
        price: trade.price,
        amount: trade.amount,
        quote: trade.quote,
      });
    }
    // Trades that left the window go now, so memory stays a day's worth even when nobody reads.
    const newest = batch.trades[batch.trades.length - 1];
    if (newest) day.advance(newest.createdAt);
  }

  /**
   * A followed batch came without its trades (orders/commits.ts `feedMissing`): the market's window
   * is read again from the stored trades, which hold them (the batch committed before it was
   * followed). The old window answers meanwhile.
   */
  private reread(entry: Tracked): void {
    if (entry.reread) {
      entry.reread.again = true;
      return;
    }
    const reread = { batches: [] as CommittedBatch[], again: false };
    entry.reread = reread;
    void (async () => {
      for (;;) {
        reread.again = false;
        let day: RollingDay;
        try {
          day = await this.storedWindow(entry.market.id, this.clock());
        } catch (error) {
          this.onError(error);
          // The old window, with the trades of the batches followed meanwhile that it can take.
          for (const batch of reread.batches) this.addTrades(entry.day, batch);
          break;
        }
        if (reread.again) continue;
        for (const batch of reread.batches) this.addTrades(day, batch);
        entry.day = day;
        break;
      }
      entry.reread = undefined;
      entry.version += 1;
    })();
  }

  /** The window of a market at `now` from its stored trades. */
  private async storedWindow(market: string, now: number): Promise<RollingDay> {
    const day = new RollingDay(this.windowMs);
    for await (const trade of storedTradesSince(this.db, market, now - this.windowMs)) day.add(trade);
    return day;
  }

  private entry(id: string): Tracked {
    const entry = this.tracked.get(id);
    if (!entry) throw new Error(`unknown market ${id}`);
    return entry;
  }

  /** The committed book of a market. */
  book(id: string): BookView {
    return this.entry(id).book.view();
  }

  /** The committed book of a market and the command log's sequence number it is at. */
  bookAt(id: string): { readonly book: BookView; readonly seq: number } {
    const entry = this.entry(id);
    return { book: entry.book.view(), seq: entry.seq };
  }

  /** Rolling statistics of a market at `now`, undefined without trades in the window. */
  day(id: string, now: number): WindowStats | undefined {
    const entry = this.entry(id);
    const before = entry.day.size;
    const day = entry.day.stats(now);
    if (entry.day.size !== before) entry.version += 1;
    return day;
  }

  /**
   * A number that changes whenever the summary of the market at `now` may differ from the one read
   * at the same number before (read after `day`/`summary` for the same `now`).
   */
  version(id: string, now: number): number {
    this.day(id, now);
    return this.entry(id).version;
  }

  summary(id: string, now: number): MarketSummary {
    const entry = this.entry(id);
    const day = this.day(id, now);
    const book = entry.book.view();
    const bid = book.bids[0];
    const ask = book.asks[0];
    return {
      market: entry.market,
      bid: bid?.[0] ?? null,
      bidVolume: bid?.[1] ?? 0n,
      ask: ask?.[0] ?? null,
      askVolume: ask?.[1] ?? 0n,
      last: book.lastPrice,
      day,
    };
  }

  /** Ids of every market, in the order of the reference data. */
  get ids(): readonly string[] {
    return this.order;
  }

  /** Every market's summary, in the order of the reference data. */
  summaries(now: number): MarketSummary[] {
    return this.order.map((id) => this.summary(id, now));
  }
}
