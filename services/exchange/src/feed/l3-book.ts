import { crc32 } from 'node:zlib';
import type { SnapshotOrder } from '../matching/snapshot.js';
import type { EngineEvent, Side } from '../matching/types.js';
import { levelText } from './checksum.js';
import { crc32Combine } from './crc32-combine.js';
import { bestPrices } from './top-levels.js';

/** One resting order of the order-by-order book: price and remaining amount in minor units. */
export interface L3Order {
  readonly id: number;
  readonly side: Side;
  readonly price: bigint;
  amount: bigint;
  /** When it entered the book (ms): the command that placed it, or that triggered it (a stop). */
  readonly at: number;
}

/** A change of one batch: `add` joins the end of its price level, `change` keeps its place. */
export interface L3Change {
  readonly type: 'add' | 'change' | 'delete';
  readonly order: Readonly<L3Order>;
}

/** The engine's live orders in priority order (BookState.liveOrders): resting ones and waiting stops. */
export interface LiveOrders {
  readonly book: readonly SnapshotOrder[];
  readonly stops: readonly SnapshotOrder[];
}

/** An order of the command being read that may still rest: the taker, then the stops it triggered. */
interface Taker {
  readonly id: number;
  readonly side: Side;
  /** Null for a market order, which never rests. */
  readonly price: bigint | null;
  amount: bigint;
  readonly at: number;
  done: boolean;
}

/**
 * One price level: its orders in queue order (a Map keeps insertion order) and the CRC32 of its
 * checksum text (its orders' texts in queue order), followed through the changes a crossing market
 * makes: an order joining the end, the first order filled or leaving (crc32-combine.ts). Another
 * change (an order of the middle cancelled or amended) leaves it to be read again from the orders.
 */
interface Level {
  readonly orders: Map<number, L3Order>;
  /** Undefined: not known, read from the orders at the next checksum. */
  crc: number | undefined;
  /** Bytes of the level's text (while `crc` is known). */
  bytes: number;
}

interface Stop {
  readonly side: Side;
  readonly price: bigint;
  readonly amount: bigint;
}

/**
 * The book order by order (the `book_l3` channel), kept from the matching engine's events of each
 * committed batch (matching/types.ts), never from the engine itself: the same events on every node
 * of a cluster (each node's copy runs the same commands) give the same book. Pure.
 *
 * The events say when an order leaves or trades, not when it rests, so a command is read as the
 * engine runs it (engine.ts `apply`): the accepted order takes first, then each stop it triggered, in
 * trigger order; an order rests when its turn ends with something left (a later taker of the same
 * command may still trade with it, as a maker). A trade names its taker, so a trade of the next
 * taker ends the turn of the one before; the next command's `accepted` ends the command.
 */
export class L3Book {
  private readonly levels: Record<Side, Map<bigint, Level>> = {
    buy: new Map(),
    sell: new Map(),
  };
  private readonly byId = new Map<number, L3Order>();
  private readonly stops = new Map<number, Stop>();
  private takers: Taker[] = [];
  private turn = 0;
  /** Orders the batch touched, as they were before it (null: not in the book before the batch). */
  private readonly before = new Map<number, L3Order | null>();
  /** The checksum text of orders, kept until they trade (a WeakMap: it goes with the order). */
  private readonly orderTexts = new WeakMap<L3Order, string>();
  /** Orders that rested during the batch, in the order they joined their levels. */
  private appended: number[] = [];
  /** Orders of the batch that an amend sent to the back of a level (a delete, then an add). */
  private readonly moved = new Set<number>();

  constructor(live: LiveOrders) {
    this.replace(live);
  }

  /** Starts over from the engine's live orders (listed in priority order). */
  replace(live: LiveOrders): void {
    this.levels.buy.clear();
    this.levels.sell.clear();
    this.byId.clear();
    this.stops.clear();
    this.takers = [];
    this.turn = 0;
    this.before.clear();
    this.appended = [];
    this.moved.clear();
    // The levels' CRCs are read at the first checksum, and only the best ten's.
    for (const order of live.book)
      this.insert(
        {
          id: order.id,
          side: order.side,
          price: BigInt(order.price),
          amount: BigInt(order.remaining),
          at: order.time,
        },
        false,
      );
    for (const stop of live.stops)
      this.stops.set(stop.id, { side: stop.side, price: BigInt(stop.price), amount: BigInt(stop.remaining) });
  }

  get size(): number {
    return this.byId.size;
  }

  /**
   * Applies the events of one committed batch (in the order the engine emitted them) and returns
   * what changed, net over the batch: deletes and changes of orders that rested before it, then the
   * orders that rested during it, in the order they joined their levels (as they are at its end).
   */
  applyBatch(events: readonly EngineEvent[]): L3Change[] {
    for (const event of events) this.read(event);
    this.endCommand();
    const changes: L3Change[] = [];
    for (const [id, prior] of this.before) {
      if (prior === null) continue;
      const now = this.byId.get(id);
      if (!now || this.moved.has(id)) changes.push({ type: 'delete', order: { ...prior, amount: 0n } });
      else if (now.amount !== prior.amount) changes.push({ type: 'change', order: { ...now } });
    }
    // An order that joined more than once (amended again) is added where it joined last.
    const last = new Map<number, number>();
    for (const [index, id] of this.appended.entries()) last.set(id, index);
    this.appended.forEach((id, index) => {
      const now = this.byId.get(id);
      if (now && last.get(id) === index && (this.before.get(id) === null || this.moved.has(id))) {
        changes.push({ type: 'add', order: { ...now } });
      }
    });
    this.before.clear();
    this.appended = [];
    this.moved.clear();
    return changes;
  }

  private read(event: EngineEvent): void {
    switch (event.type) {
      case 'accepted':
        this.endCommand();
        if (event.kind === 'limit_stop_loss') {
          this.stops.set(event.orderId, { side: event.side, price: event.price!, amount: event.amount! });
        } else {
          this.takers.push({
            id: event.orderId,
            side: event.side,
            price: event.kind === 'limit' ? event.price : null,
            amount: event.amount ?? 0n,
            at: event.time,
            done: false,
          });
        }
        return;
      case 'stop_triggered': {
        const stop = this.stops.get(event.orderId);
        if (!stop) throw new Error(`L3 book: stop ${event.orderId} triggered but never seen`);
        this.stops.delete(event.orderId);
        this.takers.push({ id: event.orderId, ...stop, at: event.time, done: false });
        return;
      }
      case 'trade': {
        const buyerTakes = event.takerSide === 'buy';
        const takerId = buyerTakes ? event.buyOrderId : event.sellOrderId;
        const makerId = buyerTakes ? event.sellOrderId : event.buyOrderId;
        const taker = this.turnOf(takerId);
        if (!taker) throw new Error(`L3 book: trade ${event.tradeId} of an unknown taker ${takerId}`);
        taker.amount -= event.amount;
        const maker = this.byId.get(makerId);
        if (!maker) throw new Error(`L3 book: trade ${event.tradeId} of an unknown maker ${makerId}`);
        this.touch(maker);
        this.changeAmount(maker, maker.amount - event.amount);
        return;
      }
      case 'amended': {
        // An amend is a command of its own: the command before has ended (its takers rested).
        if (event.reason === 'amend') this.endCommand();
        const resting = this.byId.get(event.orderId);
        if (!resting) {
          // The taker of this command, reduced by self-trade prevention `decrement` before it rests.
          const taker = this.turnOf(event.orderId);
          if (!taker) throw new Error(`L3 book: amend of an unknown order ${event.orderId}`);
          taker.amount = event.remaining;
          return;
        }
        if (event.priority === 'kept') {
          this.touch(resting);
          this.changeAmount(resting, event.remaining);
          return;
        }
        // Moved: to the back of its (new) level, as one delete and one add of the batch.
        this.remove(resting);
        this.insert({ ...resting, price: event.price, amount: event.remaining });
        this.moved.add(event.orderId);
        this.appended.push(event.orderId);
        return;
      }
      case 'done': {
        const resting = this.byId.get(event.orderId);
        if (resting) {
          this.remove(resting);
          return;
        }
        const taker = this.turnOf(event.orderId);
        if (taker) taker.done = true;
        else this.stops.delete(event.orderId);
        return;
      }
    }
  }

  /**
   * The taker `id` of the command being read, ending the turns before it (those orders rest); undefined
   * when no taker of the command has that id (the order rested already, or is a stop).
   */
  private turnOf(id: number): Taker | undefined {
    let at = this.turn;
    while (at < this.takers.length && this.takers[at]!.id !== id) at += 1;
    if (at >= this.takers.length) return undefined;
    while (this.turn < at) this.rest(this.takers[this.turn++]!);
    return this.takers[at];
  }

  /** The command ends: the takers whose turn had not ended rest, in turn order. */
  private endCommand(): void {
    while (this.turn < this.takers.length) this.rest(this.takers[this.turn++]!);
    this.takers = [];
    this.turn = 0;
  }

  private rest(taker: Taker): void {
    if (taker.done || taker.price === null || taker.amount <= 0n) return;
    const order: L3Order = {
      id: taker.id,
      side: taker.side,
      price: taker.price,
      amount: taker.amount,
      at: taker.at,
    };
    if (!this.before.has(order.id)) this.before.set(order.id, null);
    this.insert(order);
    this.appended.push(order.id);
  }

  /** Adds `order` at the end of its level; `follow`: a new level's CRC is followed from its first order. */
  private insert(order: L3Order, follow = true): void {
    const side = this.levels[order.side];
    let level = side.get(order.price);
    if (!level) {
      level = { orders: new Map(), crc: follow ? 0 : undefined, bytes: 0 };
      side.set(order.price, level);
    }
    level.orders.set(order.id, order);
    if (level.crc !== undefined) {
      // The text grows at its end: the CRC goes on from where it was.
      const text = this.textOf(order);
      level.crc = crc32(text, level.crc);
      level.bytes += text.length;
    }
    this.byId.set(order.id, order);
  }

  /** An order's checksum text, kept until its amount changes. */
  private textOf(order: L3Order): string {
    let text = this.orderTexts.get(order);
    if (text === undefined) {
      text = levelText([[order.price, order.amount]]);
      this.orderTexts.set(order, text);
    }
    return text;
  }

  /**
   * Takes the first order's text off the level's CRC (the CRC of what follows it), or forgets the
   * CRC when `order` is not first. Returns the bytes that follow it, or undefined when forgotten.
   */
  private dropFirst(level: Level, order: L3Order): number | undefined {
    if (level.crc === undefined) return undefined;
    if (level.orders.keys().next().value !== order.id) {
      level.crc = undefined;
      return undefined;
    }
    const text = this.textOf(order);
    const rest = level.bytes - text.length;
    level.crc = crc32Combine(crc32(text), level.crc, rest);
    level.bytes = rest;
    return rest;
  }

  /** A resting order's remaining amount changes in place (a fill, an amend that keeps its priority). */
  private changeAmount(order: L3Order, amount: bigint): void {
    const level = this.levels[order.side].get(order.price)!;
    const rest = this.dropFirst(level, order);
    order.amount = amount;
    this.orderTexts.delete(order);
    if (rest === undefined || level.crc === undefined) return;
    // The first order's new text, then the rest as it was.
    const text = this.textOf(order);
    level.crc = crc32Combine(crc32(text), level.crc, rest);
    level.bytes = rest + text.length;
  }

  private touch(order: L3Order): void {
    if (!this.before.has(order.id)) this.before.set(order.id, { ...order });
  }

  private remove(order: L3Order): void {
    this.touch(order);
    const side = this.levels[order.side];
    const level = side.get(order.price)!;
    this.dropFirst(level, order);
    level.orders.delete(order.id);
    if (level.orders.size === 0) side.delete(order.price);
    this.byId.delete(order.id);
  }

  /** Every resting order of a side, best level first and in queue order within a level. */
  side(side: Side): L3Order[] {
    const levels = this.levels[side];
    const prices = [...levels.keys()].sort((a, b) => (a === b ? 0 : a < b === (side === 'buy') ? 1 : -1));
    const out: L3Order[] = [];
    for (const price of prices) for (const order of levels.get(price)!.orders.values()) out.push(order);
    return out;
  }

  /**
   * Kraken's L3 checksum of the book as it is (checksum.ts), from each level's CRC (crc32-combine.ts):
   * a batch costs the orders it changed, not every order of the best ten levels (which on a busy
   * market hold thousands); a level whose CRC was forgotten is read again from its orders.
   */
  checksum(): number {
    let crc = 0;
    const fold = (side: Side) => {
      const levels = this.levels[side];
      for (const price of bestPrices(levels.keys(), side === 'buy')) {
        const level = levels.get(price)!;
        if (level.crc === undefined) {
          const parts: string[] = [];
          for (const order of level.orders.values()) parts.push(this.textOf(order));
          const text = parts.join('');
          level.crc = crc32(text);
          level.bytes = text.length;
        }
        crc = crc32Combine(crc, level.crc, level.bytes);
      }
    };
    fold('sell');
    fold('buy');
    return crc;
  }
}
