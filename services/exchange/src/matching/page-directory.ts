/** Page numbers at or above the first one seen, up to this many, live in a plain array. */
const NEAR = 1 << 20;

/**
 * Finds the page for a page number: order ids are a growing sequence, so page numbers are too, and
 * an array indexed from the first page seen answers most look-ups with one indexed load instead of a
 * hash-map probe. Page numbers below that first one or too far above it (ids replayed out of order,
 * a restored book) fall back to a `Map`, so any id still works.
 */
export class PageDirectory<T> {
  private base = -1;
  private readonly near: (T | undefined)[] = [];
  private readonly far = new Map<number, T>();

  get(pageNo: number): T | undefined {
    const i = pageNo - this.base;
    if (this.base >= 0 && i >= 0 && i < NEAR) return this.near[i];
    return this.far.get(pageNo);
  }

  set(pageNo: number, page: T): void {
    if (this.base < 0) this.base = pageNo;
    const i = pageNo - this.base;
    if (i < 0 || i >= NEAR) {
      this.far.set(pageNo, page);
      return;
    }
    // Grow without holes so that the array keeps V8's fast packed elements.
    while (this.near.length < i) this.near.push(undefined);
    this.near[i] = page;
  }

  delete(pageNo: number): void {
    const i = pageNo - this.base;
    if (this.base >= 0 && i >= 0 && i < this.near.length) this.near[i] = undefined;
    else this.far.delete(pageNo);
  }

  /** Every page with its number, ascending. */
  entries(): [number, T][] {
    const all: [number, T][] = [...this.far.entries()];
    this.near.forEach((page, i) => {
      if (page !== undefined) all.push([this.base + i, page]);
    });
    return all.sort((a, b) => a[0] - b[0]);
  }
}
