import { amountToNumber } from '../money/decimal.js';
import type { BookView, LiveOrders } from '../orders/book-view.js';
import type { CommittedBatch } from '../orders/commits.js';
import type { TradingMarket } from '../orders/markets.js';
import type { BookDiff } from './book-levels.js';
import { groupedChecksum, wireLevel, wireSide } from './book-levels.js';
import { encode } from './encode.js';
import { GroupedLevels } from './grouped-book.js';
import { L3Book, type L3Change, type L3Order } from './l3-book.js';

/**
 * The frames one committed batch makes on the public channels of its market, each serialised once,
 * when first read: a batch nobody follows live is only kept for a resume (journal.ts), and most are
 * never read (issue 46: serialising every batch's three frames for no subscriber was about 5 % of
 * the server's CPU on order entry). What a frame says that depends on the books at the batch (its
 * diff, its checksum, the order-by-order changes) is taken when the batch is, so a frame made later
 * holds the same bytes as one made at once.
 */
export interface BatchFrames {
  readonly seq: number;
  /** The sequence number the batch's book frames chain from (its diffs' `prev_seq`). */
  readonly prevSeq: number;
  /** Absent when the batch made no trade. */
  readonly trades?: Buffer;
  readonly book: Buffer;
  readonly l3: Buffer;
  /** About how many bytes the frames take once made (the journal's bound, before they are). */
  readonly estimatedBytes: number;
}

/** Rough serialised sizes (bytes) of a frame's envelope, a level, an order event and a trade. */
const FRAME_BYTES = 110;
const LEVEL_BYTES = 30;
const L3_EVENT_BYTES = 90;
const TRADE_BYTES = 110;

/** What a batch's frames are made of, taken when the batch is (see BatchFrames). */
interface FrameParts {
  readonly market: TradingMarket;
  readonly wireOrder: (order: Readonly<L3Order>, withSide: boolean) => object;
  readonly seq: number;
  readonly prevSeq: number;
  readonly trades: CommittedBatch['trades'];
  readonly diff: BookDiff | undefined;
  readonly bookChecksum: number;
  readonly l3Checksum: number;
  readonly l3: readonly L3Change[];
}

/** A batch's frames, each encoded on its first read and kept. */
class LazyBatchFrames implements BatchFrames {
  private tradesFrame: Buffer | undefined;
  private bookFrame: Buffer | undefined;
  private l3Frame: Buffer | undefined;
  readonly estimatedBytes: number;

  constructor(private readonly parts: FrameParts) {
    const levels = (parts.diff?.bids.length ?? 0) + (parts.diff?.asks.length ?? 0);
    this.estimatedBytes =
      3 * FRAME_BYTES +
      levels * LEVEL_BYTES +
      parts.l3.length * L3_EVENT_BYTES +
      parts.trades.length * TRADE_BYTES;
  }

  get seq(): number {
    return this.parts.seq;
  }

  get prevSeq(): number {
    return this.parts.prevSeq;
  }

  get trades(): Buffer | undefined {
    const { market, seq, trades } = this.parts;
    if (trades.length === 0) return undefined;
    this.tradesFrame ??= encode({
      event: 'trades',
      channel: 'trades',
      market: market.id,
      seq,
      trades: trades.map((trade) => ({
        id: trade.id,
        price: market.formatPrice(trade.price),
        amount: market.formatAmount(trade.amount),
        side: trade.takerSide,
        at: trade.createdAt,
        self_trade: trade.selfTrade === true,
      })),
    });
    return this.tradesFrame;
  }

  // Sent even when no displayed level changed, so that the diffs of a market chain `prev_seq`
  // to `seq` without a hole: a client sees a missed frame by the numbers alone.
  get book(): Buffer {
    const { market, seq, prevSeq, diff } = this.parts;
    this.bookFrame ??= encode({
      event: 'diff',
      channel: 'book',
      market: market.id,
      seq,
      prev_seq: prevSeq,
      checksum: this.parts.bookChecksum,
      bids: (diff?.bids ?? []).map((change) => wireLevel(market, change)),
      asks: (diff?.asks ?? []).map((change) => wireLevel(market, change)),
    });
    return this.bookFrame;
  }

  get l3(): Buffer {
    const { market, seq, prevSeq, wireOrder } = this.parts;
    this.l3Frame ??= encode({
      event: 'diff',
      channel: 'book_l3',
      market: market.id,
      seq,
      prev_seq: prevSeq,
      checksum: this.parts.l3Checksum,
      events: this.parts.l3.map((change) => ({ type: change.type, ...wireOrder(change.order, true) })),
    });
    return this.l3Frame;
  }
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
    return new LazyBatchFrames({
      market: this.market,
      wireOrder: (order, withSide) => this.wireOrder(order, withSide),
      seq: batch.seq,
      prevSeq,
      trades: batch.trades,
      diff,
      // The checksums are of the books as this batch leaves them: taken now, whenever the frames are made.
      bookChecksum: groupedChecksum(this.book.book),
      l3Checksum: this.l3.checksum(),
      l3,
    });
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
