import { CANCELLED, ClosedOrders, FILLED } from './closed-orders.js';
import { OrderIndex } from './order-index.js';
import { type Level, NIL, OrderStore } from './order-list.js';
import { PriceLadder } from './price-ladder.js';
import { captureOrders, type EngineSnapshot, restoreOrders, type SnapshotOrder } from './snapshot.js';
import type { MarketSpec, OrderId, Side } from './types.js';
import { type Market, resolveMarket } from './validate.js';

export const SIDES: readonly Side[] = ['buy', 'sell'];

/** `[price, volume, orderCount]` of one price level. */
export type BookEntry = [price: bigint, volume: bigint, orders: number];

export interface LiveOrder {
  readonly status: 'open' | 'stop';
  readonly id: OrderId;
  readonly account: string;
  readonly side: Side;
  readonly price: bigint;
  readonly stopPrice: bigint | null;
  readonly remaining: bigint;
  readonly time: number;
}

function entry(level: Level): BookEntry {
  return [level.bigPrice, BigInt(level.total), level.count];
}

/**
 * The state of one market's engine and the read side over it: queries for the book, tickers and
 * order lookups, and the snapshot that captures it all. The matching rules that change it are in
 * `MatchingEngine` (engine.ts).
 */
export abstract class BookState {
  readonly market: Market;
  protected readonly bids = new PriceLadder(1);
  protected readonly asks = new PriceLadder(-1);
  /** Buy stops trigger when last >= stop: the lowest stop first. */
  protected readonly buyStops = new PriceLadder(-1);
  /** Sell stops trigger when last <= stop: the highest stop first. */
  protected readonly sellStops = new PriceLadder(1);
  /** The records of the live orders (resting and waiting stops). */
  protected readonly store = new OrderStore();
  /** Every live order's record slot by id: O(1) cancel. */
  protected readonly live: OrderIndex;
  /** Final status of every order that left, so cancels of finished orders get a precise error. */
  protected readonly closed: ClosedOrders;
  /** Largest order id seen: a larger id cannot be a duplicate, which skips two lookups. */
  protected maxId = 0;
  protected seq = 0;
  protected tradeSeq = 0;
  /** Last trade price in price minor units; 0 before the first trade. */
  protected last = 0;

  constructor(spec: MarketSpec) {
    this.market = resolveMarket(spec);
    this.live = new OrderIndex(this.market.idStride);
    this.closed = new ClosedOrders(this.market.idStride);
  }

  get lastPrice(): bigint | null {
    return this.last === 0 ? null : BigInt(this.last);
  }

  /** Best bid and ask as `[price, volume, orderCount]`, or null for an empty side. */
  top(): { bid: BookEntry | null; ask: BookEntry | null } {
    const bid = this.bids.best();
    const ask = this.asks.best();
    return { bid: bid === undefined ? null : entry(bid), ask: ask === undefined ? null : entry(ask) };
  }

  /** Aggregated book, best first, at most `levels` per side (the `/v3/book` and v2 `depth` source). */
  depth(levels = Number.POSITIVE_INFINITY): { bids: BookEntry[]; asks: BookEntry[] } {
    const take = (ladder: PriceLadder): BookEntry[] => {
      const out: BookEntry[] = [];
      for (const level of ladder.levels()) {
        if (out.length >= levels) break;
        out.push(entry(level));
      }
      return out;
    };
    return { bids: take(this.bids), asks: take(this.asks) };
  }

  /** A live order (resting or waiting stop), or its final status, or undefined when unknown. */
  order(id: OrderId): LiveOrder | { status: 'filled' | 'cancelled' } | undefined {
    const slot = this.live.get(id);
    if (slot === NIL) {
      const status = this.closed.get(id);
      return status === undefined ? undefined : { status: status === FILLED ? 'filled' : 'cancelled' };
    }
    const store = this.store;
    const stop = store.stopPrice(slot);
    return {
      status: stop > 0 ? 'stop' : 'open',
      id,
      account: store.accountName(store.account(slot)),
      side: SIDES[store.side(slot)]!,
      price: BigInt(store.price(slot)),
      stopPrice: stop > 0 ? BigInt(stop) : null,
      remaining: BigInt(store.remaining(slot)),
      time: store.time(slot),
    };
  }

  /** Number of live orders (resting plus waiting stops). */
  get openOrders(): number {
    return this.live.size;
  }

  /**
   * The live orders in priority order, as `snapshot()` lists them (`book`, `stops`), without the
   * closed ids: what a follower of the book order by order starts from (src/feed/l3-book.ts).
   */
  liveOrders(): { book: SnapshotOrder[]; stops: SnapshotOrder[] } {
    return captureOrders(this.store, {
      bids: this.bids,
      asks: this.asks,
      buyStops: this.buyStops,
      sellStops: this.sellStops,
    });
  }

  snapshot(): EngineSnapshot {
    const filled: OrderId[] = [];
    const cancelled: OrderId[] = [];
    for (const [id, status] of this.closed.entries()) (status === FILLED ? filled : cancelled).push(id);
    return {
      version: 2,
      market: this.market.id,
      seq: this.seq,
      maxId: this.maxId,
      tradeSeq: this.tradeSeq,
      lastPrice: this.last === 0 ? null : String(this.last),
      ...captureOrders(this.store, {
        bids: this.bids,
        asks: this.asks,
        buyStops: this.buyStops,
        sellStops: this.sellStops,
      }),
      filled,
      cancelled,
    };
  }

  /** Loads a snapshot into this (empty) state: same orders, same priority, same counters. */
  protected load(snapshot: EngineSnapshot): void {
    if ((snapshot.version !== 1 && snapshot.version !== 2) || snapshot.market !== this.market.id) {
      throw new Error(
        `snapshot of ${snapshot.market} v${snapshot.version} does not fit market ${this.market.id}`,
      );
    }
    const parts = { bids: this.bids, asks: this.asks, buyStops: this.buyStops, sellStops: this.sellStops };
    restoreOrders(snapshot, this.store, parts, (id, slot) => this.live.set(id, slot));
    for (const id of snapshot.filled) this.closed.set(id, FILLED);
    for (const id of snapshot.cancelled) this.closed.set(id, CANCELLED);
    this.maxId = snapshot.maxId;
    this.seq = snapshot.seq;
    this.tradeSeq = snapshot.tradeSeq;
    this.last = snapshot.lastPrice === null ? 0 : Number(snapshot.lastPrice);
  }
}
