import { BUY, NIL, type OrderStore, SELL } from './order-list.js';
import type { PriceLadder } from './price-ladder.js';
import { type OrderId, type Side, STP_MODES, type StpMode } from './types.js';

/** One live order in priority order. Amounts are decimal strings of minor units (JSON-safe). */
export interface SnapshotOrder {
  readonly id: OrderId;
  readonly account: string;
  readonly side: Side;
  readonly price: string;
  /** Trigger price of a waiting stop order, null for a resting order. */
  readonly stopPrice: string | null;
  readonly remaining: string;
  readonly time: number;
  /** Version 2: base already executed (an amend's new total must exceed it); absent in version 1. */
  readonly filled?: string;
  /** Version 2: the order's self-trade prevention mode when not the default (a stop keeps it until it triggers). */
  readonly stp?: StpMode;
}

/**
 * The whole state of one engine, plain JSON. Orders are listed best level first and FIFO within a
 * level (bids, then asks); stops nearest-to-trigger first (buy stops, then sell stops). Restoring
 * re-inserts them in that order, which reproduces price-time priority exactly.
 */
export interface EngineSnapshot {
  /**
   * 2: orders carry `filled` and `stp`. 1 (still loaded): without them, so an order restored from it
   * cannot have its amount amended (its filled part is unknown) and keeps the default mode.
   */
  readonly version: 1 | 2;
  readonly market: string;
  readonly seq: number;
  readonly maxId: number;
  readonly tradeSeq: number;
  readonly lastPrice: string | null;
  readonly book: SnapshotOrder[];
  readonly stops: SnapshotOrder[];
  readonly filled: OrderId[];
  readonly cancelled: OrderId[];
}

export interface SnapshotParts {
  readonly bids: PriceLadder;
  readonly asks: PriceLadder;
  readonly buyStops: PriceLadder;
  readonly sellStops: PriceLadder;
}

function ordersOf(store: OrderStore, ladder: PriceLadder, into: SnapshotOrder[]): void {
  for (const level of ladder.levels()) {
    for (let slot = level.head; slot !== NIL; slot = store.next(slot)) {
      const stop = store.stopPrice(slot);
      const stp = store.stp(slot);
      const order: SnapshotOrder = {
        id: store.id(slot),
        account: store.accountName(store.account(slot)),
        side: store.side(slot) === BUY ? 'buy' : 'sell',
        price: String(store.price(slot)),
        stopPrice: stop === 0 ? null : String(stop),
        remaining: String(store.remaining(slot)),
        time: store.time(slot),
        filled: String(store.filled(slot)),
      };
      into.push(stp === 0 ? order : { ...order, stp: STP_MODES[stp]! });
    }
  }
}

export function captureOrders(
  store: OrderStore,
  parts: SnapshotParts,
): { book: SnapshotOrder[]; stops: SnapshotOrder[] } {
  const book: SnapshotOrder[] = [];
  const stops: SnapshotOrder[] = [];
  ordersOf(store, parts.bids, book);
  ordersOf(store, parts.asks, book);
  ordersOf(store, parts.buyStops, stops);
  ordersOf(store, parts.sellStops, stops);
  return { book, stops };
}

/** Rebuilds the ladders from a snapshot's order lists, calling `added(id, slot)` for each order. */
export function restoreOrders(
  snapshot: EngineSnapshot,
  store: OrderStore,
  parts: SnapshotParts,
  added: (id: number, slot: number) => void,
): void {
  for (const order of [...snapshot.book, ...snapshot.stops]) {
    const side = order.side === 'buy' ? BUY : SELL;
    const stop = order.stopPrice === null ? 0 : Number(order.stopPrice);
    const price = Number(order.price);
    const slot = store.alloc(
      order.id,
      store.accountId(order.account),
      side,
      price,
      stop,
      Number(order.remaining),
      order.time,
      order.filled === undefined ? -1 : Number(order.filled),
      order.stp === undefined ? 0 : STP_MODES.indexOf(order.stp),
    );
    const ladder =
      stop === 0 ? (side === BUY ? parts.bids : parts.asks) : side === BUY ? parts.buyStops : parts.sellStops;
    store.push(ladder.levelAt(stop === 0 ? price : stop), slot);
    added(order.id, slot);
  }
}
