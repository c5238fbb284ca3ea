import { BUY, OrderNode, SELL } from './order-list.js';
import type { PriceLadder } from './price-ladder.js';
import type { OrderId, Side } from './types.js';

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
}

/**
 * The whole state of one engine, plain JSON. Orders are listed best level first and FIFO within a
 * level (bids, then asks); stops nearest-to-trigger first (buy stops, then sell stops). Restoring
 * re-inserts them in that order, which reproduces price-time priority exactly.
 */
export interface EngineSnapshot {
  readonly version: 1;
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

function ordersOf(ladder: PriceLadder, into: SnapshotOrder[]): void {
  for (const level of ladder.levels()) {
    for (let node = level.head; node !== null; node = node.next) {
      into.push({
        id: node.id,
        account: node.account,
        side: node.side === BUY ? 'buy' : 'sell',
        price: String(node.price),
        stopPrice: node.stopPrice === 0 ? null : String(node.stopPrice),
        remaining: String(node.remaining),
        time: node.time,
      });
    }
  }
}

export function captureOrders(parts: SnapshotParts): { book: SnapshotOrder[]; stops: SnapshotOrder[] } {
  const book: SnapshotOrder[] = [];
  const stops: SnapshotOrder[] = [];
  ordersOf(parts.bids, book);
  ordersOf(parts.asks, book);
  ordersOf(parts.buyStops, stops);
  ordersOf(parts.sellStops, stops);
  return { book, stops };
}

/** Rebuilds the ladders from a snapshot's order lists, returning every node for the id map. */
export function restoreOrders(snapshot: EngineSnapshot, parts: SnapshotParts): OrderNode[] {
  const nodes: OrderNode[] = [];
  for (const order of [...snapshot.book, ...snapshot.stops]) {
    const side = order.side === 'buy' ? BUY : SELL;
    const stop = order.stopPrice === null ? 0 : Number(order.stopPrice);
    const price = Number(order.price);
    const node = new OrderNode(
      order.id,
      order.account,
      side,
      price,
      stop,
      Number(order.remaining),
      order.time,
    );
    const ladder =
      stop === 0 ? (side === BUY ? parts.bids : parts.asks) : side === BUY ? parts.buyStops : parts.sellStops;
    ladder.levelAt(stop === 0 ? price : stop).push(node);
    nodes.push(node);
  }
  return nodes;
}
