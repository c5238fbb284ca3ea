/**
 * Live orders as fixed-size records in one growable buffer, linked into intrusive doubly linked FIFO
 * lists (one per price level) by slot number. Removing an order from its level (cancel, fill,
 * self-trade cancel) is O(1) given its slot, which the engine finds through the id index.
 *
 * Why records in a buffer rather than one object per order: a deep book holds hundreds of thousands
 * of orders. As objects, each new order was allocated in the young generation, copied by the
 * scavenger and promoted, and every link from an old order to a new one went through the write
 * barrier into the remembered set; the garbage collector took about a sixth of the engine's time and
 * each scavenge grew with the book. Records hold no pointers, so the collector never looks at them,
 * and one record is one 64-byte stretch of memory (one or two cache lines), which is what a cancel of
 * a random old order has to fetch.
 *
 * Prices and amounts are JavaScript numbers here (exact integers below 2^53, enforced by validation):
 * number arithmetic does not allocate, bigint does, and the matching loop runs on these fields.
 */

export const BUY = 0;
export const SELL = 1;
export type SideCode = typeof BUY | typeof SELL;

/** "No order": the end of a list, an empty level. */
export const NIL = -1;

/**
 * Record layout: 8 float64 (bytes 0-63) seen also as 16 int32; the float fields use bytes 0-39 and
 * 56-63 (F_FILLED), the int32 fields bytes 40-55.
 */
const F_STRIDE = 8;
const I_STRIDE = 16;
const F_ID = 0;
const F_PRICE = 1;
const F_REMAINING = 2;
const F_TIME = 3;
/** Trigger price of a stop order waiting in the stop book, 0 otherwise. */
const F_STOP = 4;
/** Base amount already executed (what an amend's new total must exceed); -1: unknown (a v1 snapshot). */
const F_FILLED = 7;
const I_PREV = 10;
const I_NEXT = 11;
const I_ACCOUNT = 12;
/** Side in bit 0, the self-trade prevention code above it. */
const I_SIDE = 13;

const INITIAL_CAPACITY = 1024;

/**
 * The records of every live order of one engine, with a free list of released slots, and the
 * account names they refer to (interned: a record holds a small integer, so that self-trade checks
 * compare integers and records stay free of pointers).
 *
 * Capacity doubles when full and is kept afterwards (64 bytes per slot at the book's largest size).
 */
export class OrderStore {
  /** The records as float64 (ids, prices, amounts, times) and as int32 (links, account, side). */
  f: Float64Array;
  i: Int32Array;
  private capacity = INITIAL_CAPACITY;
  private used = 0;
  private freeHead = NIL;
  private readonly accountNames: string[] = [];
  private readonly accountIds = new Map<string, number>();

  constructor() {
    const buffer = new ArrayBuffer(INITIAL_CAPACITY * F_STRIDE * 8);
    this.f = new Float64Array(buffer);
    this.i = new Int32Array(buffer);
  }

  /** The small integer standing for an account name (the same one for the life of the engine). */
  accountId(name: string): number {
    let id = this.accountIds.get(name);
    if (id === undefined) {
      id = this.accountNames.length;
      this.accountNames.push(name);
      this.accountIds.set(name, id);
    }
    return id;
  }

  accountName(id: number): string {
    return this.accountNames[id]!;
  }

  /** A slot for a new live order, not yet in any list. */
  alloc(
    id: number,
    account: number,
    side: SideCode,
    price: number,
    stopPrice: number,
    remaining: number,
    time: number,
    filled = 0,
    stp = 0,
  ): number {
    let slot = this.freeHead;
    if (slot !== NIL) this.freeHead = this.i[slot * I_STRIDE + I_NEXT]!;
    else {
      if (this.used === this.capacity) this.grow();
      slot = this.used++;
    }
    const f = this.f;
    const b = slot * F_STRIDE;
    f[b + F_ID] = id;
    f[b + F_PRICE] = price;
    f[b + F_REMAINING] = remaining;
    f[b + F_TIME] = time;
    f[b + F_STOP] = stopPrice;
    f[b + F_FILLED] = filled;
    const i = this.i;
    const c = slot * I_STRIDE;
    i[c + I_PREV] = NIL;
    i[c + I_NEXT] = NIL;
    i[c + I_ACCOUNT] = account;
    i[c + I_SIDE] = side | (stp << 1);
    return slot;
  }

  /** Returns a slot that is in no list any more to the free list. */
  free(slot: number): void {
    this.i[slot * I_STRIDE + I_NEXT] = this.freeHead;
    this.freeHead = slot;
  }

  private grow(): void {
    const capacity = this.capacity * 2;
    const buffer = new ArrayBuffer(capacity * F_STRIDE * 8);
    const f = new Float64Array(buffer);
    f.set(this.f);
    this.f = f;
    this.i = new Int32Array(buffer);
    this.capacity = capacity;
  }

  id(slot: number): number {
    return this.f[slot * F_STRIDE + F_ID]!;
  }

  price(slot: number): number {
    return this.f[slot * F_STRIDE + F_PRICE]!;
  }

  remaining(slot: number): number {
    return this.f[slot * F_STRIDE + F_REMAINING]!;
  }

  setRemaining(slot: number, remaining: number): void {
    this.f[slot * F_STRIDE + F_REMAINING] = remaining;
  }

  setPrice(slot: number, price: number): void {
    this.f[slot * F_STRIDE + F_PRICE] = price;
  }

  filled(slot: number): number {
    return this.f[slot * F_STRIDE + F_FILLED]!;
  }

  setFilled(slot: number, filled: number): void {
    this.f[slot * F_STRIDE + F_FILLED] = filled;
  }

  time(slot: number): number {
    return this.f[slot * F_STRIDE + F_TIME]!;
  }

  stopPrice(slot: number): number {
    return this.f[slot * F_STRIDE + F_STOP]!;
  }

  account(slot: number): number {
    return this.i[slot * I_STRIDE + I_ACCOUNT]!;
  }

  side(slot: number): SideCode {
    return (this.i[slot * I_STRIDE + I_SIDE]! & 1) as SideCode;
  }

  /** The order's self-trade prevention mode (the engine's STP code), kept for a stop that triggers later. */
  stp(slot: number): number {
    return this.i[slot * I_STRIDE + I_SIDE]! >> 1;
  }

  next(slot: number): number {
    return this.i[slot * I_STRIDE + I_NEXT]!;
  }

  /** Appends a slot at the tail of a level's FIFO. */
  push(level: Level, slot: number): void {
    const i = this.i;
    const c = slot * I_STRIDE;
    const tail = level.tail;
    i[c + I_PREV] = tail;
    i[c + I_NEXT] = NIL;
    if (tail === NIL) level.head = slot;
    else i[tail * I_STRIDE + I_NEXT] = slot;
    level.tail = slot;
    level.total += this.f[slot * F_STRIDE + F_REMAINING]!;
    level.count++;
  }

  /** Removes a slot from its level's FIFO (the slot stays allocated). */
  unlink(level: Level, slot: number): void {
    const i = this.i;
    const c = slot * I_STRIDE;
    const prev = i[c + I_PREV]!;
    const next = i[c + I_NEXT]!;
    if (prev === NIL) level.head = next;
    else i[prev * I_STRIDE + I_NEXT] = next;
    if (next === NIL) level.tail = prev;
    else i[next * I_STRIDE + I_PREV] = prev;
    i[c + I_PREV] = NIL;
    i[c + I_NEXT] = NIL;
    level.total -= this.f[slot * F_STRIDE + F_REMAINING]!;
    level.count--;
  }
}

export class Level {
  /** First and last order slots of the FIFO, NIL when empty. */
  head = NIL;
  tail = NIL;
  /** Sum of the remaining amounts of the orders in the list. */
  total = 0;
  count = 0;
  /** The price as a bigint, made once per level for the trade events. */
  readonly bigPrice: bigint;
  /**
   * The engine's round of changed levels (MatchingEngine `takeChangedLevels`) in which this level was
   * last recorded as changed: recorded once per round without a set lookup on the hot path.
   */
  changedIn = 0;

  constructor(
    readonly price: number,
    /** Sort key: larger is better (nearer the top of the book / nearer to triggering). */
    readonly key: number,
  ) {
    this.bigPrice = BigInt(price);
  }
}
