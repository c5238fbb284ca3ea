import type { BookEntry, MatchingEngine } from '../matching/engine.js';
import type { SnapshotOrder } from '../matching/snapshot.js';

/** The committed state of a market's book, as public market data shows it. */
export interface BookView {
  readonly bids: readonly BookEntry[];
  readonly asks: readonly BookEntry[];
  readonly lastPrice: bigint | null;
}

export const EMPTY_VIEW: BookView = { bids: [], asks: [], lastPrice: null };

/** A copy of the engine's book as it is now. */
export function captureView(engine: MatchingEngine): BookView {
  const depth = engine.depth();
  return { bids: depth.bids, asks: depth.asks, lastPrice: engine.lastPrice };
}

/** The engine's live orders in priority order (resting ones, best level first; waiting stops). */
export interface LiveOrders {
  readonly book: readonly SnapshotOrder[];
  readonly stops: readonly SnapshotOrder[];
}
