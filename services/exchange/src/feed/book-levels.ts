import type { BookEntry } from '../matching/book-state.js';
import { amountToNumber } from '../money/decimal.js';
import type { TradingMarket } from '../orders/markets.js';
import type { BookView } from '../orders/writer.js';
import { bookChecksum, CHECKSUM_DEPTH, type ChecksumEntry } from './checksum.js';
import { bestPrices } from './top-levels.js';

/** One price level as the feed shows it: grouped price, volume and orders, in engine units. */
export interface Level {
  readonly volume: bigint;
  readonly orders: number;
}

/** Both sides of a grouped book, keyed by grouped price (engine units). */
export interface GroupedBook {
  readonly bids: ReadonlyMap<bigint, Level>;
  readonly asks: ReadonlyMap<bigint, Level>;
}

/**
 * Groups a book view to the market's `display_precision` the way `GET /v3/book/:symbol` does
 * (orders/market-data.ts v3Book): bids rounded down, asks up, so a group never looks better than its
 * orders. Both the snapshot and the diffs are built from this, which is what lets a client that
 * follows the diffs end with exactly the REST book.
 */
export function groupBook(market: TradingMarket, view: BookView): GroupedBook {
  const { quote_precision: qp, display_precision: dp } = market.file;
  const step = qp > dp ? 10n ** BigInt(qp - dp) : 1n;
  const group = (entries: readonly BookEntry[], up: boolean): Map<bigint, Level> => {
    const out = new Map<bigint, Level>();
    for (const [price, volume, orders] of entries) {
      const grouped = up ? ((price + step - 1n) / step) * step : (price / step) * step;
      const current = out.get(grouped);
      out.set(
        grouped,
        current ? { volume: current.volume + volume, orders: current.orders + orders } : { volume, orders },
      );
    }
    return out;
  };
  return { bids: group(view.bids, false), asks: group(view.asks, true) };
}

/** A changed level: `volume` 0 (and `orders` 0) removes the level. */
export type LevelChange = readonly [price: bigint, volume: bigint, orders: number];

export interface BookDiff {
  readonly bids: readonly LevelChange[];
  readonly asks: readonly LevelChange[];
}

function sideDiff(before: ReadonlyMap<bigint, Level>, after: ReadonlyMap<bigint, Level>): LevelChange[] {
  const changes: LevelChange[] = [];
  for (const [price, level] of after) {
    const old = before.get(price);
    if (!old || old.volume !== level.volume || old.orders !== level.orders)
      changes.push([price, level.volume, level.orders]);
  }
  for (const price of before.keys()) if (!after.has(price)) changes.push([price, 0n, 0]);
  return changes;
}

/** What turns `before` into `after`; undefined when nothing changed. */
export function diffBooks(before: GroupedBook, after: GroupedBook): BookDiff | undefined {
  const bids = sideDiff(before.bids, after.bids);
  const asks = sideDiff(before.asks, after.asks);
  return bids.length === 0 && asks.length === 0 ? undefined : { bids, asks };
}

/** `[price, volume, orders]` as JSON numbers, the units of `GET /v3/book/:symbol`. */
export type WireLevel = [price: number, volume: number, orders: number];

export function wireLevel(market: TradingMarket, [price, volume, orders]: LevelChange): WireLevel {
  return [
    amountToNumber(price, market.file.quote_precision),
    amountToNumber(volume, market.file.base_precision),
    orders,
  ];
}

/** One side best first (bids highest price first, asks lowest first), as wire levels. */
export function wireSide(
  market: TradingMarket,
  side: ReadonlyMap<bigint, Level>,
  bids: boolean,
): WireLevel[] {
  const prices = [...side.keys()].sort((a, b) => (a === b ? 0 : a < b === bids ? 1 : -1));
  return prices.map((price) => {
    const level = side.get(price)!;
    return wireLevel(market, [price, level.volume, level.orders]);
  });
}

/** Kraken's checksum (checksum.ts) of a grouped book: its best ten groups per side, price and volume. */
export function groupedChecksum(book: GroupedBook): number {
  const top = (side: ReadonlyMap<bigint, Level>, highestFirst: boolean): ChecksumEntry[] =>
    bestPrices(side.keys(), highestFirst).map((price) => [price, side.get(price)!.volume]);
  return bookChecksum(top(book.asks, false), top(book.bids, true));
}

/**
 * The checksum of the book `GET /v3/book/:symbol` shows for `view` (grouped like `groupBook`),
 * reading only as far as the best ten groups of each side (the view is sorted best first).
 */
export function viewChecksum(market: TradingMarket, view: BookView): number {
  const { quote_precision: qp, display_precision: dp } = market.file;
  const step = qp > dp ? 10n ** BigInt(qp - dp) : 1n;
  const top = (entries: readonly BookEntry[], up: boolean): ChecksumEntry[] => {
    const out: [bigint, bigint][] = [];
    for (const [price, volume] of entries) {
      const grouped = up ? ((price + step - 1n) / step) * step : (price / step) * step;
      const last = out[out.length - 1];
      if (last && last[0] === grouped) last[1] += volume;
      else if (out.length === CHECKSUM_DEPTH) break;
      else out.push([grouped, volume]);
    }
    return out;
  };
  return bookChecksum(top(view.asks, true), top(view.bids, false));
}
