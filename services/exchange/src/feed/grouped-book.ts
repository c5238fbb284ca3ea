import type { BookEntry } from '../matching/engine.js';
import type { LevelChanges } from '../orders/level-book.js';
import type { TradingMarket } from '../orders/markets.js';
import type { BookView } from '../orders/writer.js';
import {
  type BookDiff,
  diffBooks,
  type GroupedBook,
  groupBook,
  type Level,
  type LevelChange,
} from './book-levels.js';

const GONE: Level = { volume: 0n, orders: 0 };

/** One side: the raw levels (engine prices), the grouped ones, and the groups changed since the last diff. */
class Side {
  readonly raw = new Map<bigint, BookEntry>();
  readonly grouped = new Map<bigint, Level>();
  /** Group price -> the level as the last diff left it (GONE when absent). */
  readonly before = new Map<bigint, Level>();

  constructor(private readonly toGroup: (price: bigint) => bigint) {}

  set(entry: BookEntry): void {
    const [price, volume, orders] = entry;
    const old = this.raw.get(price);
    if (volume === 0n) this.raw.delete(price);
    else this.raw.set(price, entry);
    const dVolume = volume - (old?.[1] ?? 0n);
    const dOrders = orders - (old?.[2] ?? 0);
    if (dVolume === 0n && dOrders === 0) return;
    const group = this.toGroup(price);
    const current = this.grouped.get(group);
    if (!this.before.has(group)) this.before.set(group, current ?? GONE);
    const next = { volume: (current?.volume ?? 0n) + dVolume, orders: (current?.orders ?? 0) + dOrders };
    if (next.orders === 0) this.grouped.delete(group);
    else this.grouped.set(group, next);
  }

  takeChanges(): LevelChange[] {
    const changes: LevelChange[] = [];
    for (const [group, old] of this.before) {
      const now = this.grouped.get(group) ?? GONE;
      if (now.volume !== old.volume || now.orders !== old.orders)
        changes.push([group, now.volume, now.orders]);
    }
    this.before.clear();
    return changes;
  }

  replace(entries: readonly BookEntry[], grouped: ReadonlyMap<bigint, Level>): void {
    this.raw.clear();
    for (const entry of entries) this.raw.set(entry[0], entry);
    this.grouped.clear();
    for (const [price, level] of grouped) this.grouped.set(price, level);
    this.before.clear();
  }
}

/**
 * A market's book grouped to `display_precision` (book-levels.ts groupBook), kept from the level
 * changes of committed batches: each change moves its group by the difference, so a batch costs the
 * levels it changed, however deep the book. `takeDiff()` gives the groups that changed since the last
 * call, as the `book` channel's diff.
 */
export class GroupedLevels {
  private readonly bids: Side;
  private readonly asks: Side;

  constructor(
    private readonly market: TradingMarket,
    view: BookView,
  ) {
    const { quote_precision: qp, display_precision: dp } = market.file;
    const step = qp > dp ? 10n ** BigInt(qp - dp) : 1n;
    this.bids = new Side((price) => (price / step) * step);
    this.asks = new Side((price) => ((price + step - 1n) / step) * step);
    this.replace(view);
  }

  get book(): GroupedBook {
    return { bids: this.bids.grouped, asks: this.asks.grouped };
  }

  apply(changes: LevelChanges): void {
    for (const entry of changes.bids) this.bids.set(entry);
    for (const entry of changes.asks) this.asks.set(entry);
  }

  /** Starts over from a whole book; the diff then holds what differs from the book before. */
  replaceWithDiff(view: BookView): BookDiff | undefined {
    this.takeDiff();
    const before: GroupedBook = { bids: new Map(this.bids.grouped), asks: new Map(this.asks.grouped) };
    this.replace(view);
    return diffBooks(before, this.book);
  }

  takeDiff(): BookDiff | undefined {
    const bids = this.bids.takeChanges();
    const asks = this.asks.takeChanges();
    return bids.length === 0 && asks.length === 0 ? undefined : { bids, asks };
  }

  private replace(view: BookView): void {
    const grouped = groupBook(this.market, view);
    this.bids.replace(view.bids, grouped.bids);
    this.asks.replace(view.asks, grouped.asks);
  }
}
