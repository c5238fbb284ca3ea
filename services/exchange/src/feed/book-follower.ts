import type { WireLevel } from './book-levels.js';

/** A `snapshot` or `diff` frame of the `book` channel, as a client receives it. */
export interface BookFrame {
  readonly event: 'snapshot' | 'diff';
  readonly seq: number;
  readonly bids: readonly WireLevel[];
  readonly asks: readonly WireLevel[];
}

export type FollowOutcome = 'applied' | 'stale' | 'gap' | 'waiting';

/**
 * The client side of the `book` channel (the reference for client authors; used by the tests and the
 * benchmark): a snapshot replaces the book; a diff not newer than the last frame applied is skipped
 * (the snapshot already holds it); a newer diff must carry the sequence number right after the last
 * one applied, else the follower reports a gap and ignores diffs until the next snapshot (the client
 * then subscribes again, which sends a fresh snapshot).
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
    } else if (frame.seq !== this.seq + 1) {
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
