import type { WireLevel } from './book-levels.js';

/** A `snapshot` or `diff` frame of the `book` channel, as a client receives it. */
export interface BookFrame {
  readonly event: 'snapshot' | 'diff';
  readonly seq: number;
  /** A diff's sequence number before its batch (the last frame's `seq` when none was missed). */
  readonly prev_seq?: number;
  readonly bids: readonly WireLevel[];
  readonly asks: readonly WireLevel[];
}

export type FollowOutcome = 'applied' | 'stale' | 'gap' | 'waiting';

/**
 * The client side of the `book` channel (the reference for client authors; used by the tests and the
 * benchmark): a snapshot replaces the book; a diff not newer than the last frame applied is skipped
 * (the snapshot already holds it); a newer diff must start where the last frame applied ended
 * (`prev_seq` not greater than its `seq`: a diff sets whole levels, so one that covers more than the
 * missing batches is still exact), else the follower reports a gap and ignores diffs until the next
 * snapshot (the client then subscribes again, which sends a fresh snapshot). Sequence numbers are the
 * command log's, the same on every node of a cluster: a client that moves to another node keeps its
 * book and goes on, or sees the gap. (A diff without `prev_seq` must carry the last `seq` + 1.)
 */
export class BookFollower {
  private readonly bids = new Map<number, WireLevel>();
  private readonly asks = new Map<number, WireLevel>();
  private seq: number | undefined;

  /** The sequence number of the last frame applied; undefined before a snapshot or after a gap. */
  get lastSeq(): number | undefined {
    return this.seq;
  }

  apply(frame: BookFrame): FollowOutcome {
    if (frame.event === 'snapshot') {
      this.bids.clear();
      this.asks.clear();
    } else if (this.seq === undefined) {
      return 'waiting';
    } else if (frame.seq <= this.seq) {
      return 'stale';
    } else if (frame.prev_seq === undefined ? frame.seq !== this.seq + 1 : frame.prev_seq > this.seq) {
      this.seq = undefined;
      return 'gap';
    }
    for (const level of frame.bids) set(this.bids, level);
    for (const level of frame.asks) set(this.asks, level);
    this.seq = frame.seq;
    return 'applied';
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
