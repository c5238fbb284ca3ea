import { Level } from './order-list.js';

/**
 * The price levels of one side, sorted so that the best level is the LAST element of an array:
 * best-price lookup is O(1) and consuming the best level during matching is an O(1) `pop()`, so the
 * cost of matching does not depend on how deep the book is. A `price -> level` map finds a level in
 * O(1) for inserts.
 *
 * A new price level is placed by binary search plus `splice` (a memmove of the levels worse than it;
 * orders near the top of the book, which is where nearly all new levels appear, move only a few
 * slots). A level emptied away from the top by a cancel is left in place (lazy deletion, keeping
 * cancels O(1)); it is reused when an order arrives at that price, dropped when it reaches the top,
 * and swept by `compact()` when empty levels outnumber live ones.
 *
 * `keySign` turns prices into keys where larger is better: +1 for bids and sell stops (highest
 * first), -1 for asks and buy stops (lowest first).
 */
export class PriceLadder {
  private readonly sorted: Level[] = [];
  private readonly byPrice = new Map<number, Level>();
  private emptyLevels = 0;

  constructor(private readonly keySign: 1 | -1) {}

  /** False when the side has no level at all (cheaper than `best()` for a side that is usually empty). */
  get hasLevels(): boolean {
    return this.sorted.length !== 0;
  }

  /** Best non-empty level, dropping empty levels found at the top. */
  best(): Level | undefined {
    // Index only within bounds: reading sorted[-1] sends V8's optimised code back to the interpreter.
    const sorted = this.sorted;
    while (sorted.length !== 0) {
      const top = sorted[sorted.length - 1]!;
      if (top.count !== 0) return top;
      sorted.pop();
      this.byPrice.delete(top.price);
      this.emptyLevels--;
    }
    return undefined;
  }

  /**
   * The level `depth` places below the top of the sorted levels (empty levels included), or
   * undefined past the bottom: a walk from the best level without an iterator object.
   */
  fromTop(depth: number): Level | undefined {
    const index = this.sorted.length - 1 - depth;
    return index >= 0 ? this.sorted[index] : undefined;
  }

  /** The level at `price`, created (empty) in sorted position when missing. */
  levelAt(price: number): Level {
    const found = this.byPrice.get(price);
    if (found !== undefined) {
      if (found.count === 0) this.emptyLevels--;
      return found;
    }
    const level = new Level(price, price * this.keySign);
    const sorted = this.sorted;
    const key = level.key;
    let lo = 0;
    let hi = sorted.length;
    // Fast path: a new best level (common for orders inside the spread).
    if (hi === 0 || sorted[hi - 1]!.key < key) {
      sorted.push(level);
    } else {
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if (sorted[mid]!.key < key) lo = mid + 1;
        else hi = mid;
      }
      sorted.splice(lo, 0, level);
    }
    this.byPrice.set(price, level);
    return level;
  }

  /** The level at `price`, which must exist (a live order's own level always does). */
  levelOf(price: number): Level {
    return this.byPrice.get(price)!;
  }

  /** Call after an order left `level` so that empty levels are accounted for. */
  noteEmptied(level: Level): void {
    if (level.count !== 0) return;
    this.emptyLevels++;
    if (this.emptyLevels > 1024 && this.emptyLevels * 2 > this.sorted.length) this.compact();
  }

  /** Non-empty levels from the best down. */
  *levels(): IterableIterator<Level> {
    const sorted = this.sorted;
    for (let i = sorted.length - 1; i >= 0; i--) {
      const level = sorted[i]!;
      if (level.count > 0) yield level;
    }
  }

  get levelCount(): number {
    return this.sorted.length - this.emptyLevels;
  }

  private compact(): void {
    const live = this.sorted.filter((level) => level.count > 0);
    for (const level of this.sorted) if (level.count === 0) this.byPrice.delete(level.price);
    this.sorted.length = 0;
    for (const level of live) this.sorted.push(level);
    this.emptyLevels = 0;
  }
}
