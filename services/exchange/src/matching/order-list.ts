/**
 * Intrusive doubly linked FIFO lists: each resting order is its own list node, so removing it from
 * its price level (cancel, fill, self-trade cancel) is O(1) given the node, which the engine finds
 * through its `id -> node` map.
 *
 * Prices and amounts are JavaScript numbers here (exact integers below 2^53, enforced by validation):
 * number arithmetic does not allocate, bigint does, and the matching loop runs on these fields.
 */

export const BUY = 0;
export const SELL = 1;
export type SideCode = typeof BUY | typeof SELL;

/**
 * A live order. Nodes are recycled by the engine (a freed node is reset for the next resting order),
 * so a filled book's nodes stay in the old generation instead of every new order being allocated,
 * copied by the young-generation GC and promoted: fields are therefore writable, but only the engine
 * writes them.
 */
export class OrderNode {
  prev: OrderNode | null = null;
  next: OrderNode | null = null;
  level: Level | null = null;

  constructor(
    public id: number,
    public account: string,
    public side: SideCode,
    /** Limit price in price minor units. */
    public price: number,
    /** Trigger price for a stop order waiting in the stop book, 0 otherwise. */
    public stopPrice: number,
    /** Base amount not yet executed, amount minor units. */
    public remaining: number,
    public time: number,
  ) {}

  reset(
    id: number,
    account: string,
    side: SideCode,
    price: number,
    stopPrice: number,
    remaining: number,
    time: number,
  ): this {
    this.id = id;
    this.account = account;
    this.side = side;
    this.price = price;
    this.stopPrice = stopPrice;
    this.remaining = remaining;
    this.time = time;
    return this;
  }
}

export class Level {
  head: OrderNode | null = null;
  tail: OrderNode | null = null;
  /** Sum of `remaining` of the orders in the list. */
  total = 0;
  count = 0;
  /** The price as a bigint, made once per level for the trade events. */
  readonly bigPrice: bigint;

  constructor(
    readonly price: number,
    /** Sort key: larger is better (nearer the top of the book / nearer to triggering). */
    readonly key: number,
  ) {
    this.bigPrice = BigInt(price);
  }

  push(node: OrderNode): void {
    node.level = this;
    node.prev = this.tail;
    node.next = null;
    if (this.tail === null) this.head = node;
    else this.tail.next = node;
    this.tail = node;
    this.total += node.remaining;
    this.count++;
  }

  unlink(node: OrderNode): void {
    const { prev, next } = node;
    if (prev === null) this.head = next;
    else prev.next = next;
    if (next === null) this.tail = prev;
    else next.prev = prev;
    node.prev = null;
    node.next = null;
    node.level = null;
    this.total -= node.remaining;
    this.count--;
  }
}
