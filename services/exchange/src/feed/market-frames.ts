import { amountToNumber } from '../money/decimal.js';
import type { BookView, LiveOrders } from '../orders/book-view.js';
import type { CommittedBatch } from '../orders/commits.js';
import type { TradingMarket } from '../orders/markets.js';
import type { BookDiff } from './book-levels.js';
import { groupedChecksum, wireLevel, wireSide } from './book-levels.js';
import { encode } from './encode.js';
import { GroupedLevels } from './grouped-book.js';
import { L3Book, type L3Change, type L3Order } from './l3-book.js';

/** The frames one committed batch makes on the public channels of its market, serialised once. */
export interface BatchFrames {
  readonly seq: number;
  /** The sequence number the batch's book frames chain from (its diffs' `prev_seq`). */
  readonly prevSeq: number;
  /** Absent when the batch made no trade. */
  readonly trades?: Buffer;
  readonly book: Buffer;
  readonly l3: Buffer;
}

/**
 * One market's public frames: its book grouped to display_precision (the `book` channel) and order
 * by order (`book_l3`), both kept from the committed batches, and the sequence number of the last
 * batch whose frames were made. Every node of a cluster makes the same frames from the same batches
 * (the committed log's), checksums included. The books are kept whether anyone follows them or not:
 * a later snapshot, or a resume, must find them committed and current.
 */
export class MarketFrames {
  readonly book: GroupedLevels;
  readonly l3: L3Book;

  /** After a resync of the order-by-order book: the number it was taken at (batches up to it are in it). */
  private l3At = -1;

  constructor(
    readonly market: TradingMarket,
    view: BookView,
    live: LiveOrders,
    /** The command log's sequence number the books are at. */
    public seq: number,
    /**
     * The committed live orders now and their number (MarketWriter.committedLive, committedSeq), to
     * start the order-by-order book over if the events of a batch ever do not fit it (a bug: it is
     * reported, and the clients get the whole book as a diff, so they stay exact).
     */
    private readonly resync?: {
      readonly live: () => { readonly orders: LiveOrders; readonly seq: number };
      readonly onError: (error: unknown) => void;
    },
  ) {
    this.book = new GroupedLevels(market, view);
    this.l3 = new L3Book(live);
  }

  /**
   * Takes a committed batch into the books; its frames, or undefined for a batch without commands
   * (every request refused before the engine: not in the log, no frame).
   */
  take(batch: CommittedBatch): BatchFrames | undefined {
    // A whole rebuilt book covers every batch since the last one published here, whatever the writer
    // knew of them: its diffs chain from there.
    const prevSeq = batch.book ? Math.min(batch.prevSeq, this.seq) : batch.prevSeq;
    let diff: BookDiff | undefined;
    if (batch.book) diff = this.book.replaceWithDiff(batch.book);
    this.book.apply(batch.levels);
    const changed = this.book.takeDiff();
    if (changed) diff = diff ? mergeDiffs(diff, changed) : changed;
    const l3 = this.l3Changes(batch);
    if (batch.seq > this.seq) this.seq = batch.seq;
    if (batch.seq <= prevSeq) return undefined;
    const id = this.market.id;
    const market = this.market;
    return {
      seq: batch.seq,
      prevSeq,
      ...(batch.trades.length > 0
        ? {
            trades: encode({
              event: 'trades',
              channel: 'trades',
              market: id,
              seq: batch.seq,
              trades: batch.trades.map((trade) => ({
                id: trade.id,
                price: market.formatPrice(trade.price),
                amount: market.formatAmount(trade.amount),
                side: trade.takerSide,
                at: trade.createdAt,
                self_trade: trade.selfTrade === true,
              })),
            }),
          }
        : {}),
      // Sent even when no displayed level changed, so that the diffs of a market chain `prev_seq`
      // to `seq` without a hole: a client sees a missed frame by the numbers alone.
      book: encode({
        event: 'diff',
        channel: 'book',
        market: id,
        seq: batch.seq,
        prev_seq: prevSeq,
        checksum: groupedChecksum(this.book.book),
        bids: (diff?.bids ?? []).map((change) => wireLevel(market, change)),
        asks: (diff?.asks ?? []).map((change) => wireLevel(market, change)),
      }),
      l3: encode({
        event: 'diff',
        channel: 'book_l3',
        market: id,
        seq: batch.seq,
        prev_seq: prevSeq,
        checksum: this.l3.checksum(),
        events: l3.map((change) => ({ type: change.type, ...this.wireOrder(change.order, true) })),
      }),
    };
  }

  /** The `book` snapshot as the books are now (`resumed: false` answers a resume that could not be served). */
  bookSnapshot(resumed?: false): string {
    return JSON.stringify({
      event: 'snapshot',
      channel: 'book',
      market: this.market.id,
      seq: this.seq,
      checksum: groupedChecksum(this.book.book),
      bids: wireSide(this.market, this.book.book.bids, true),
      asks: wireSide(this.market, this.book.book.asks, false),
      ...(resumed === false ? { resumed } : {}),
    });
  }

  /** The `book_l3` snapshot as the book is now: each side best level first, each level in queue order. */
  l3Snapshot(resumed?: false): string {
    return JSON.stringify({
      event: 'snapshot',
      channel: 'book_l3',
      market: this.market.id,
      seq: this.seq,
      checksum: this.l3.checksum(),
      bids: this.l3.side('buy').map((order) => this.wireOrder(order, false)),
      asks: this.l3.side('sell').map((order) => this.wireOrder(order, false)),
      ...(resumed === false ? { resumed } : {}),
    });
  }

  private l3Changes(batch: CommittedBatch): L3Change[] {
    if (batch.live) return this.replaceL3(batch.live);
    // Already in the book a resync took (it was taken after this batch had committed).
    if (batch.seq <= this.l3At) return [];
    try {
      return this.l3.applyBatch(batch.events);
    } catch (error) {
      if (!this.resync) throw error;
      this.resync.onError(error);
      const { orders, seq } = this.resync.live();
      this.l3At = seq;
      return this.replaceL3(orders);
    }
  }

  /** A rebuilt book (an unknown outcome settled): every order of the old book deleted, the new one added in queue order. */
  private replaceL3(live: LiveOrders): L3Change[] {
    const gone: L3Change[] = [...this.l3.side('buy'), ...this.l3.side('sell')].map((order) => ({
      type: 'delete',
      order: { ...order, amount: 0n },
    }));
    this.l3.replace(live);
    const added: L3Change[] = [...this.l3.side('buy'), ...this.l3.side('sell')].map((order) => ({
      type: 'add',
      order,
    }));
    return [...gone, ...added];
  }

  private wireOrder(order: Readonly<L3Order>, withSide: boolean) {
    const { quote_precision: qp, base_precision: bp } = this.market.file;
    return {
      ...(withSide ? { side: order.side === 'buy' ? 'bid' : 'ask' } : {}),
      order_id: order.id,
      price: amountToNumber(order.price, qp),
      amount: amountToNumber(order.amount, bp),
      at: order.at,
    };
  }
}

/** `first` then `second` as one diff: a level of `second` replaces the same level of `first`. */
function mergeDiffs(first: BookDiff, second: BookDiff): BookDiff {
  const side = (a: BookDiff['bids'], b: BookDiff['bids']) => {
    const byPrice = new Map(a.map((change) => [change[0], change]));
    for (const change of b) byPrice.set(change[0], change);
    return [...byPrice.values()];
  };
  return { bids: side(first.bids, second.bids), asks: side(first.asks, second.asks) };
}
