import type { WireLevel } from './book-levels.js';
import { bookChecksum, type ChecksumEntry, l3Checksum, minorOf } from './checksum.js';

/** A `snapshot` or `diff` frame of the `book` channel, as a client receives it. */
export interface BookFrame {
  readonly event: 'snapshot' | 'diff';
  readonly seq: number;
  /** A diff's sequence number before its batch (the last frame's `seq` when none was missed). */
  readonly prev_seq?: number;
  /** CRC32 of the book after the frame (checksum.ts). */
  readonly checksum?: number;
  readonly bids: readonly WireLevel[];
  readonly asks: readonly WireLevel[];
}

/**
 * `mismatch`: the frame applied but the book it left does not match its checksum (a bug, or a frame
 * altered on the way): the follower drops its book, as after a gap.
 */
export type FollowOutcome = 'applied' | 'stale' | 'gap' | 'waiting' | 'mismatch';

/** The market's fixed precisions (`quote_precision`, `base_precision` of GET /v3/markets), for checksums. */
export interface Precision {
  readonly price: number;
  readonly amount: number;
}

/**
 * The sequence rules every book follower applies (shared by BookFollower and L3Follower): a
 * snapshot replaces the book; a diff not newer than the last frame applied is skipped (the snapshot
 * already holds it); a newer diff must start where the last frame applied ended (`prev_seq` not
 * greater than its `seq`: a diff sets whole levels or orders, so one that covers more than the
 * missing batches is still exact), else the follower reports a gap and ignores diffs until the next
 * snapshot (the client then subscribes again, which sends a fresh snapshot). Sequence numbers are
 * the command log's, the same on every node of a cluster. (A diff without `prev_seq` must carry the
 * last `seq` + 1.)
 */
abstract class SequencedFollower<
  F extends { event: string; seq: number; prev_seq?: number; checksum?: number },
> {
  protected seq: number | undefined;

  constructor(protected readonly precision?: Precision) {}

  /** The sequence number of the last frame applied; undefined before a snapshot or after a gap. */
  get lastSeq(): number | undefined {
    return this.seq;
  }

  apply(frame: F): FollowOutcome {
    if (frame.event === 'snapshot') {
      this.clear();
    } else if (this.seq === undefined) {
      return 'waiting';
    } else if (frame.seq <= this.seq) {
      return 'stale';
    } else if (frame.prev_seq === undefined ? frame.seq !== this.seq + 1 : frame.prev_seq > this.seq) {
      this.seq = undefined;
      return 'gap';
    }
    this.take(frame);
    this.seq = frame.seq;
    if (this.precision && frame.checksum !== undefined && this.checksum() !== frame.checksum) {
      this.seq = undefined;
      return 'mismatch';
    }
    return 'applied';
  }

  protected abstract clear(): void;
  protected abstract take(frame: F): void;
  /** The checksum of the book as it is now (needs the precision). */
  abstract checksum(): number;
}

/**
 * The client side of the `book` channel (the reference for client authors; used by the tests and the
 * benchmark), with the rules above. Given the market's precision it checks each frame's checksum
 * (Kraken's scheme: docs/feed.md, Checksums).
 */
export class BookFollower extends SequencedFollower<BookFrame> {
  private readonly bids = new Map<number, WireLevel>();
  private readonly asks = new Map<number, WireLevel>();

  protected clear(): void {
    this.bids.clear();
    this.asks.clear();
  }

  protected take(frame: BookFrame): void {
    for (const level of frame.bids) set(this.bids, level);
    for (const level of frame.asks) set(this.asks, level);
  }

  checksum(): number {
    const { price, amount } = this.precision!;
    const entries = (levels: WireLevel[]): ChecksumEntry[] =>
      levels.map(([p, volume]) => [minorOf(p, price), minorOf(volume, amount)]);
    const bids = [...this.bids.values()].sort((a, b) => b[0] - a[0]).slice(0, 10);
    const asks = [...this.asks.values()].sort((a, b) => a[0] - b[0]).slice(0, 10);
    return bookChecksum(entries(asks), entries(bids));
  }

  /** The book in the shape of `GET /v3/book/:symbol`: bids best first (volume > 0), then asks (volume < 0). */
  restBook(): WireLevel[] {
    const bids = [...this.bids.values()].sort((a, b) => b[0] - a[0]);
    const asks = [...this.asks.values()].sort((a, b) => a[0] - b[0]);
    return [...bids, ...asks.map(([price, volume, orders]): WireLevel => [price, -volume, orders])];
  }
}

function set(side: Map<number, WireLevel>, level: WireLevel): void {
  if (level[1] === 0) side.delete(level[0]);
  else side.set(level[0], level);
}

/** One order of a `book_l3` frame. */
export interface L3WireOrder {
  readonly order_id: number;
  readonly price: number;
  readonly amount: number;
  readonly at: number;
}

/** A `snapshot` or `diff` frame of the `book_l3` channel, as a client receives it. */
export interface L3Frame {
  readonly event: 'snapshot' | 'diff';
  readonly seq: number;
  readonly prev_seq?: number;
  readonly checksum?: number;
  /** A snapshot's orders, each side best level first and in queue order within a level. */
  readonly bids?: readonly L3WireOrder[];
  readonly asks?: readonly L3WireOrder[];
  /** A diff's changes: `add` joins the end of its price level, `change` keeps its place, `delete` leaves. */
  readonly events?: readonly (L3WireOrder & {
    readonly type: 'add' | 'change' | 'delete';
    readonly side: 'bid' | 'ask';
  })[];
}

/**
 * The client side of the `book_l3` channel (the order-by-order book), with the same sequence rules;
 * given the market's precision it checks Kraken's L3 checksum, which covers each order's place in
 * its queue.
 */
export class L3Follower extends SequencedFollower<L3Frame> {
  /** Per side: price -> the level's orders in queue order (a Map keeps insertion order). */
  private readonly sides = {
    bid: new Map<number, Map<number, L3WireOrder>>(),
    ask: new Map<number, Map<number, L3WireOrder>>(),
  };
  private readonly sideOf = new Map<number, 'bid' | 'ask'>();

  protected clear(): void {
    this.sides.bid.clear();
    this.sides.ask.clear();
    this.sideOf.clear();
  }

  protected take(frame: L3Frame): void {
    if (frame.event === 'snapshot') {
      for (const order of frame.bids ?? []) this.add('bid', order);
      for (const order of frame.asks ?? []) this.add('ask', order);
      return;
    }
    for (const event of frame.events ?? []) {
      if (event.type === 'add') this.add(event.side, event);
      else if (event.type === 'delete') this.remove(event.order_id);
      else {
        const level = this.sides[event.side].get(event.price);
        if (level?.has(event.order_id)) level.set(event.order_id, pick(event));
      }
    }
  }

  private add(side: 'bid' | 'ask', order: L3WireOrder): void {
    const levels = this.sides[side];
    let level = levels.get(order.price);
    if (!level) {
      level = new Map();
      levels.set(order.price, level);
    }
    level.set(order.order_id, pick(order));
    this.sideOf.set(order.order_id, side);
  }

  private remove(id: number): void {
    const side = this.sideOf.get(id);
    if (!side) return;
    this.sideOf.delete(id);
    for (const [price, level] of this.sides[side]) {
      if (!level.delete(id)) continue;
      if (level.size === 0) this.sides[side].delete(price);
      return;
    }
  }

  /** One side's orders, best level first and in queue order within a level. */
  orders(side: 'bid' | 'ask'): L3WireOrder[] {
    const prices = [...this.sides[side].keys()].sort((a, b) => (side === 'bid' ? b - a : a - b));
    return prices.flatMap((price) => [...this.sides[side].get(price)!.values()]);
  }

  checksum(): number {
    const { price, amount } = this.precision!;
    const levels = (side: 'bid' | 'ask') => {
      const prices = [...this.sides[side].keys()]
        .sort((a, b) => (side === 'bid' ? b - a : a - b))
        .slice(0, 10);
      return prices.map((p) =>
        [...this.sides[side].get(p)!.values()].map(
          (order): ChecksumEntry => [minorOf(order.price, price), minorOf(order.amount, amount)],
        ),
      );
    };
    return l3Checksum(levels('ask'), levels('bid'));
  }
}

function pick(order: L3WireOrder): L3WireOrder {
  return { order_id: order.order_id, price: order.price, amount: order.amount, at: order.at };
}
