/**
 * Final status (filled or cancelled) of every order that left the engine, so that a cancel of a
 * finished order gets a precise error and a reused id is refused.
 *
 * A `Map<id, status>` of a million entries cost about half of the engine's time in the benchmark
 * (hashing and cache misses on every order). Order ids come from a sequence, so they are dense (in
 * a cluster, one residue of the market's id stride is: ids go through id-keys.ts first): the
 * statuses live in 2-bit slots of pages of 4,096 ids (1 KiB each), found by page number (see
 * PageDirectory), with the last page used cached. A million orders take about 250 KiB.
 */
import { IdKeys } from './id-keys.js';
import { PageDirectory } from './page-directory.js';

export const FILLED = 1;
export const CANCELLED = 2;
export type ClosedStatus = typeof FILLED | typeof CANCELLED;

const PAGE_BITS = 12;
const PAGE_SIZE = 1 << PAGE_BITS;
const INT32 = 0x7fffffff;

// Ids below 2^31 (all of them in practice) take shifts and masks; `/` and `%` on doubles are slower.
function slotOf(id: number): number {
  return id <= INT32 ? id & (PAGE_SIZE - 1) : id % PAGE_SIZE;
}

export class ClosedOrders {
  /** Ids are stored by key (id-keys.ts), dense within one residue of the market's id stride. */
  private readonly keys: IdKeys;
  private readonly pages = new PageDirectory<Uint8Array>();
  private lastPageNo = -1;
  private lastPage: Uint8Array | undefined;
  private count = 0;
  private pagesMade = 0;

  constructor(idStride = 1) {
    this.keys = new IdKeys(idStride);
  }

  get size(): number {
    return this.count;
  }

  /** Pages of statuses held (1 KiB each): what the statuses cost in memory. */
  get pageCount(): number {
    return this.pagesMade;
  }

  private page(key: number, create: boolean): Uint8Array | undefined {
    const pageNo = key <= INT32 ? key >>> PAGE_BITS : Math.floor(key / PAGE_SIZE);
    if (pageNo === this.lastPageNo) return this.lastPage;
    let page = this.pages.get(pageNo);
    if (page === undefined) {
      if (!create) return undefined;
      page = new Uint8Array(PAGE_SIZE >> 2);
      this.pages.set(pageNo, page);
      this.pagesMade++;
    }
    this.lastPageNo = pageNo;
    this.lastPage = page;
    return page;
  }

  set(id: number, status: ClosedStatus): void {
    const key = this.keys.key(id);
    const page = this.page(key, true)!;
    const slot = slotOf(key);
    const shift = (slot & 3) << 1;
    const byte = page[slot >> 2]!;
    if (((byte >> shift) & 3) === 0) this.count++;
    page[slot >> 2] = (byte & ~(3 << shift)) | (status << shift);
  }

  get(id: number): ClosedStatus | undefined {
    const key = this.keys.key(id);
    const page = this.page(key, false);
    if (page === undefined) return undefined;
    const slot = slotOf(key);
    const status = (page[slot >> 2]! >> ((slot & 3) << 1)) & 3;
    return status === 0 ? undefined : (status as ClosedStatus);
  }

  has(id: number): boolean {
    return this.get(id) !== undefined;
  }

  /** Every closed id with its status, ascending by id. */
  entries(): [number, ClosedStatus][] {
    const all: [number, ClosedStatus][] = [];
    for (const [pageNo, page] of this.pages.entries()) {
      for (let slot = 0; slot < PAGE_SIZE; slot++) {
        const status = (page[slot >> 2]! >> ((slot & 3) << 1)) & 3;
        if (status !== 0) all.push([this.keys.id(pageNo * PAGE_SIZE + slot), status as ClosedStatus]);
      }
    }
    // Keys ascend with ids only within one residue of the stride.
    return this.keys.stride === 1 ? all : all.sort((a, b) => a[0] - b[0]);
  }
}
