import type { BookEntry } from '../matching/engine.js';
import type { BookView } from './book-view.js';

/** The book levels a committed batch changed, as it left them (`volume` 0: the level is gone). */
export interface LevelChanges {
  readonly bids: readonly BookEntry[];
  readonly asks: readonly BookEntry[];
}

/**
 * A copy of a market's committed book kept from the level changes of committed batches
 * (orders/commits.ts), so that a follower's copy costs what a batch changed, not the book's depth.
 * The sorted view is made when read after a change.
 */
export class LevelBook {
  private readonly bids = new Map<bigint, BookEntry>();
  private readonly asks = new Map<bigint, BookEntry>();
  private lastPrice: bigint | null = null;
  private sorted: BookView | undefined;

  constructor(view: BookView) {
    this.replace(view);
  }

  /** Starts over from a whole book. */
  replace(view: BookView): void {
    this.bids.clear();
    this.asks.clear();
    for (const entry of view.bids) this.bids.set(entry[0], entry);
    for (const entry of view.asks) this.asks.set(entry[0], entry);
    this.lastPrice = view.lastPrice;
    this.sorted = view;
  }

  apply(changes: LevelChanges, lastPrice: bigint | null): void {
    for (const entry of changes.bids) set(this.bids, entry);
    for (const entry of changes.asks) set(this.asks, entry);
    this.lastPrice = lastPrice;
    this.sorted = undefined;
  }

  /** The book, best first per side. */
  view(): BookView {
    this.sorted ??= {
      bids: [...this.bids.values()].sort((a, b) => (a[0] === b[0] ? 0 : a[0] < b[0] ? 1 : -1)),
      asks: [...this.asks.values()].sort((a, b) => (a[0] === b[0] ? 0 : a[0] < b[0] ? -1 : 1)),
      lastPrice: this.lastPrice,
    };
    return this.sorted;
  }
}

function set(side: Map<bigint, BookEntry>, entry: BookEntry): void {
  if (entry[1] === 0n) side.delete(entry[0]);
  else side.set(entry[0], entry);
}
