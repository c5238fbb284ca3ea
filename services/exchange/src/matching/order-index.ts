import type { OrderNode } from './order-list.js';
import { PageDirectory } from './page-directory.js';

const PAGE_BITS = 8;
const PAGE_SIZE = 1 << PAGE_BITS;
const INT32 = 0x7fffffff;

// Ids below 2^31 (all of them in practice) take shifts and masks; `/` and `%` on doubles are slower.
function pageOf(id: number): number {
  return id <= INT32 ? id >>> PAGE_BITS : Math.floor(id / PAGE_SIZE);
}

function slotOf(id: number): number {
  return id <= INT32 ? id & (PAGE_SIZE - 1) : id % PAGE_SIZE;
}

class Page {
  readonly slots = new Array<OrderNode | undefined>(PAGE_SIZE).fill(undefined);
  live = 0;
}

/**
 * Live orders by id: the O(1) path from a cancel to the list node. Ids come from a sequence and are
 * dense, so nodes sit in pages of 256 slots found by page number (an array of pages, see
 * PageDirectory; the last page used is cached) instead of one big hash map: with hundreds of thousands of resting orders a `Map` spent much of a
 * cancel on hashing, cache misses and rehashing as it grew. A page is dropped when its last order
 * leaves, so memory follows the live orders rather than the range of ids ever used: about 8 bytes per
 * id in the live range, and at worst (every live order alone in its page) 2 KiB per live order.
 */
export class OrderIndex {
  private readonly pages = new PageDirectory<Page>();
  private lastPageNo = -1;
  private lastPage: Page | undefined;
  private count = 0;

  get size(): number {
    return this.count;
  }

  private page(pageNo: number): Page | undefined {
    if (pageNo === this.lastPageNo) return this.lastPage;
    const page = this.pages.get(pageNo);
    if (page !== undefined) {
      this.lastPageNo = pageNo;
      this.lastPage = page;
    }
    return page;
  }

  get(id: number): OrderNode | undefined {
    return this.page(pageOf(id))?.slots[slotOf(id)];
  }

  has(id: number): boolean {
    return this.get(id) !== undefined;
  }

  set(id: number, node: OrderNode): void {
    const pageNo = pageOf(id);
    let page = this.page(pageNo);
    if (page === undefined) {
      page = new Page();
      this.pages.set(pageNo, page);
      this.lastPageNo = pageNo;
      this.lastPage = page;
    }
    const slot = slotOf(id);
    if (page.slots[slot] === undefined) {
      page.live++;
      this.count++;
    }
    page.slots[slot] = node;
  }

  delete(id: number): void {
    const pageNo = pageOf(id);
    const page = this.page(pageNo);
    const slot = slotOf(id);
    if (page === undefined || page.slots[slot] === undefined) return;
    page.slots[slot] = undefined;
    page.live--;
    this.count--;
    if (page.live === 0) {
      this.pages.delete(pageNo);
      if (this.lastPageNo === pageNo) {
        this.lastPageNo = -1;
        this.lastPage = undefined;
      }
    }
  }
}
