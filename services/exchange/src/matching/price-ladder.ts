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
 *
 * Finding a level by price (every order that rests, every cancel and amend) goes first to a window
 * of `WINDOW` consecutive prices held in a plain array, indexed by `price - base`, and only prices
 * outside it to the `Map`: a `Map` lookup hashes the key and follows its bucket chain (two dependent
 * memory loads before the level itself), the window one load. The window is placed around the first
 * level's price and moved to the price of a new level when `RECENTRE_AFTER` levels, and at least as
 * many as the side holds, were made outside it since the last move (the book drifted away); moving
 * re-files every level, so it costs O(1) per level made, amortised.
 */
const WINDOW = 4096;
const RECENTRE_AFTER = 256;

export class PriceLadder {
  private readonly sorted: Level[] = [];
  /** Levels whose price is outside the window. */
  private readonly byPrice = new Map<number, Level>();
  /** Levels whose price is within the window, at `price - base`; null where none. */
  private readonly window: (Level | null)[] = new Array<Level | null>(WINDOW).fill(null);
  /** Price of `window[0]`; NaN until the first level is made (every index test then fails). */
  private base = Number.NaN;
  /** Levels made outside the window since it last moved. */
  private misses = 0;
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
      this.forget(top.price);
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
    const found = this.find(price);
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
    this.file(level);
    return level;
  }

  /** The level at `price`, which must exist (a live order's own level always does). */
  levelOf(price: number): Level {
    return this.find(price)!;
  }

  /** The level at `price`, from the window when the price is in it, else from the map. */
  private find(price: number): Level | undefined {
    const index = price - this.base;
    if (index >= 0 && index < WINDOW) return this.window[index] ?? undefined;
    return this.byPrice.get(price);
  }

  /** Files a new level by its price (placing the window at the first one, moving it when it drifted). */
  private file(level: Level): void {
    if (Number.isNaN(this.base)) this.base = level.price - WINDOW / 2;
    const index = level.price - this.base;
    if (index >= 0 && index < WINDOW) {
      this.window[index] = level;
      return;
    }
    this.byPrice.set(level.price, level);
    // At least as many misses as levels, so that re-filing costs O(1) per level made, amortised.
    if (++this.misses >= RECENTRE_AFTER && this.misses >= this.sorted.length) this.recentre(level.price);
  }

  /** Drops the level at `price` from the window or the map. */
  private forget(price: number): void {
    const index = price - this.base;
    if (index >= 0 && index < WINDOW) this.window[index] = null;
    else this.byPrice.delete(price);
  }

  /** Places the window around `price` and files every level again. */
  private recentre(price: number): void {
    this.window.fill(null);
    this.byPrice.clear();
    this.base = price - WINDOW / 2;
    this.misses = 0;
    for (const level of this.sorted) {
      const index = level.price - this.base;
      if (index >= 0 && index < WINDOW) this.window[index] = level;
      else this.byPrice.set(level.price, level);
    }
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
    for (const level of this.sorted) if (level.count === 0) this.forget(level.price);
    this.sorted.length = 0;
    for (const level of live) this.sorted.push(level);
    this.emptyLevels = 0;
  }
}
