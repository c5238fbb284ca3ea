import { IdKeys } from './id-keys.js';
import { NIL } from './order-list.js';
import { PageDirectory } from './page-directory.js';

const PAGE_BITS = 8;
const PAGE_SIZE = 1 << PAGE_BITS;
const INT32 = 0x7fffffff;
const INITIAL_PAGES = 64;

// Ids below 2^31 (all of them in practice) take shifts and masks; `/` and `%` on doubles are slower.
function pageOf(id: number): number {
  return id <= INT32 ? id >>> PAGE_BITS : Math.floor(id / PAGE_SIZE);
}

function slotOf(id: number): number {
  return id <= INT32 ? id & (PAGE_SIZE - 1) : id % PAGE_SIZE;
}

/**
 * Live orders by id: the O(1) path from a cancel to the order's record slot (see OrderStore). Ids
 * come from a sequence and are dense (in a cluster, one residue of the market's id stride is: ids go
 * through id-keys.ts first), so they are grouped in pages of 256 ids instead of one big hash
 * map (with hundreds of thousands of resting orders a `Map` spent much of a cancel on hashing, cache
 * misses and rehashing as it grew). A page number is found through a PageDirectory (an array from the
 * first page seen; the last page used is cached), and every page lives in ONE shared Int32Array, so a
 * look-up is one small-array load plus one load from the pool: no per-page object to fetch first,
 * nothing for the garbage collector to trace.
 *
 * A page goes back to a free list when its last order leaves, so memory follows the live orders
 * rather than the range of ids ever used: about 4 bytes per id in the live range, at worst (every live
 * order alone in its page) 1 KiB per live order. The pool keeps its largest size.
 */
export class OrderIndex {
  /** Ids are stored by key (id-keys.ts), dense within one residue of the market's id stride. */
  private readonly keys: IdKeys;
  /** Page number -> index of the page in the pool. */
  private readonly pages = new PageDirectory<number>();
  /** Slot + 1 per id (0: no live order), PAGE_SIZE entries per page. */
  private pool = new Int32Array(INITIAL_PAGES * PAGE_SIZE);
  /** Live orders per page. */
  private live = new Int32Array(INITIAL_PAGES);
  private pagesUsed = 0;
  private readonly freePages: number[] = [];
  private lastPageNo = -1;
  private lastPage = -1;
  private count = 0;

  constructor(idStride = 1) {
    this.keys = new IdKeys(idStride);
  }

  get size(): number {
    return this.count;
  }

  /** Pages in use (1 KiB each; the pool keeps its largest size). */
  get pageCount(): number {
    return this.pagesUsed - this.freePages.length;
  }

  /** Index of the page in the pool, or -1. */
  private page(pageNo: number): number {
    if (pageNo === this.lastPageNo) return this.lastPage;
    const page = this.pages.get(pageNo);
    if (page === undefined) return -1;
    this.lastPageNo = pageNo;
    this.lastPage = page;
    return page;
  }

  /** The slot of the live order with this id, or NIL. */
  get(id: number): number {
    const key = this.keys.key(id);
    const page = this.page(pageOf(key));
    return page < 0 ? NIL : this.pool[(page << PAGE_BITS) + slotOf(key)]! - 1;
  }

  has(id: number): boolean {
    return this.get(id) !== NIL;
  }

  set(id: number, slot: number): void {
    const key = this.keys.key(id);
    const pageNo = pageOf(key);
    let page = this.page(pageNo);
    if (page < 0) {
      page = this.newPage();
      this.pages.set(pageNo, page);
      this.lastPageNo = pageNo;
      this.lastPage = page;
    }
    const at = (page << PAGE_BITS) + slotOf(key);
    if (this.pool[at] === 0) {
      this.live[page]!++;
      this.count++;
    }
    this.pool[at] = slot + 1;
  }

  delete(id: number): void {
    const key = this.keys.key(id);
    const pageNo = pageOf(key);
    const page = this.page(pageNo);
    if (page < 0) return;
    const at = (page << PAGE_BITS) + slotOf(key);
    if (this.pool[at] === 0) return;
    this.pool[at] = 0;
    this.count--;
    if (--this.live[page]! === 0) {
      this.pages.delete(pageNo);
      this.freePages.push(page);
      if (this.lastPageNo === pageNo) {
        this.lastPageNo = -1;
        this.lastPage = -1;
      }
    }
  }

  /** A zeroed page: a freed one (all its entries went back to 0), or a new one at the pool's end. */
  private newPage(): number {
    const free = this.freePages.pop();
    if (free !== undefined) return free;
    if (this.pagesUsed === this.live.length) {
      const pool = new Int32Array(this.pool.length * 2);
      pool.set(this.pool);
      this.pool = pool;
      const live = new Int32Array(this.live.length * 2);
      live.set(this.live);
      this.live = live;
    }
    return this.pagesUsed++;
  }
}
