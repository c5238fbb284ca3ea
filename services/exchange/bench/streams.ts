/**
 * Seeded command streams for the engine benchmark, stored column-wise in typed arrays so that both
 * engines read exactly the same commands and the stream itself costs little memory.
 *
 * A cancel targets a random order that is live at that point: the generator follows the book with a
 * reference run of our engine (untimed; any correct price-time engine with the same self-trade policy
 * gives the same set of live orders). When fewer than `minLive` orders are live, a cancel slot becomes
 * a limit order instead, so the shallow book keeps a small but non-empty depth.
 *
 * That substitution is the only way the realised mix can leave the drawn shares, and it happens only
 * as often as the book loses orders other than by cancels. In the shallow stream limits add one order
 * each and cancels remove one each, so what decides the mix is how many resting orders the other
 * commands remove. Two rules keep that small, so that the realised mix stays within about one point
 * of 45 / 45 / 10 (the bench prints it):
 *
 * - shallow limits are passive (`passive`): a buy is placed at most one tick below the best ask, a
 *   sell at least one tick above the best bid. Without this, limits placed near a mid that has just
 *   drifted traded against orders left near the old mid, each removing a resting order instead of
 *   adding one; only the market orders take liquidity;
 * - market orders are of 1 to 10 lots against limits of 1 to 100 (the deep stream's sizes), so about
 *   one market order in ten fills a resting order completely.
 *
 * On seed 7 this realises about 45.6 / 44.4 / 10.0. The previous shallow stream (limits not clamped,
 * market orders up to 40 lots) realised 48.7 / 41.3 / 10.0; market orders of up to 20 lots with
 * passive limits realise about 46.1 / 43.9. The size limit of 10 is the largest of those that
 * keeps the mix within one point; it was chosen on the realised mix, before measuring either engine.
 */
import { MatchingEngine } from '../src/matching/engine.js';

export const LIMIT = 0;
export const CANCEL = 1;
export const MARKET = 2;
/** An amend of a live order (issue 43 variant): `amount` its new total (0: unchanged), `price` its new price (0: unchanged). */
export const AMEND = 3;
/** Time in force of a limit: 0 gtc, 1 ioc, 2 fok (issue 43 variant; all 0 otherwise). */
export const TIFS = ['gtc', 'ioc', 'fok'] as const;

export interface Stream {
  readonly name: string;
  readonly length: number;
  readonly kind: Uint8Array;
  /** 0 buy, 1 sell. */
  readonly side: Uint8Array;
  /** Order id (limit, market) or the id to cancel. */
  readonly id: Uint32Array;
  readonly price: Uint32Array;
  readonly amount: Uint32Array;
  readonly account: Uint16Array;
  readonly tif: Uint8Array;
}

export interface StreamShape {
  readonly name: string;
  /** Shares of limit and cancel commands; the rest are market orders. */
  readonly limitShare: number;
  readonly cancelShare: number;
  /** Limit prices are drawn within this many ticks of the mid, biased towards it. */
  readonly spread: number;
  /** A limit may cross the mid by up to this many ticks (a few limits trade on arrival). */
  readonly cross: number;
  /**
   * Limits never trade on arrival: a buy is placed at most one tick below the best ask, a sell at
   * least one tick above the best bid (the mid drifts, so without this a limit placed near the new
   * mid can cross orders left on the other side near the old one).
   */
  readonly passive: boolean;
  readonly maxLimitAmount: number;
  readonly maxMarketAmount: number;
  readonly minLive: number;
  /** The mid moves by -3..+3 ticks once every this many commands. */
  readonly driftEvery: number;
}

export const SHALLOW: StreamShape = {
  name: 'shallow',
  limitShare: 0.45,
  cancelShare: 0.45,
  spread: 20,
  cross: 0,
  passive: true,
  maxLimitAmount: 100,
  maxMarketAmount: 10,
  minLive: 1000,
  driftEvery: 2_000,
};

export const DEEP: StreamShape = {
  name: 'deep',
  limitShare: 0.6,
  cancelShare: 0.25,
  spread: 100,
  cross: 1,
  passive: false,
  maxLimitAmount: 100,
  maxMarketAmount: 10,
  minLive: 0,
  driftEvery: 5_000,
};

/** mulberry32: small, fast, good enough for workload generation. */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export const ACCOUNTS = 1000;
export const accountNames = Array.from({ length: ACCOUNTS }, (_, i) => `acct-${i}`);

/** Live order ids with O(1) add, remove and random pick. */
class Pool {
  private readonly ids: number[] = [];
  private readonly at = new Map<number, number>();
  get size(): number {
    return this.ids.length;
  }
  add(id: number): void {
    this.at.set(id, this.ids.length);
    this.ids.push(id);
  }
  remove(id: number): void {
    const index = this.at.get(id);
    if (index === undefined) return;
    const last = this.ids.pop()!;
    if (last !== id) {
      this.ids[index] = last;
      this.at.set(last, index);
    }
    this.at.delete(id);
  }
  pick(random: number): number {
    return this.ids[Math.floor(random * this.ids.length)]!;
  }
}

/**
 * A seeded stream of `shape`. With `options` (the issue 43 variant): 10 % of the commands become
 * amends of a random live order (half shrink it in place, a quarter grow it, a quarter move it one
 * tick away from the other side, so none trades), and of the limits 10 % are IOC and 10 % FOK; the
 * rest draws from the same generator, so the mix of the others stays as in the plain stream.
 */
/** A stream of `length` commands, every column zero, for a generator to fill. */
export function emptyStream(name: string, length: number): Stream {
  return {
    name,
    length,
    kind: new Uint8Array(length),
    side: new Uint8Array(length),
    id: new Uint32Array(length),
    price: new Uint32Array(length),
    amount: new Uint32Array(length),
    account: new Uint16Array(length),
    tif: new Uint8Array(length),
  };
}

export function generate(shape: StreamShape, length: number, seed: number, options = false): Stream {
  const random = rng(seed);
  /** Total amount (filled + remaining) of each live order, for the amends' new totals. */
  const totals = new Map<number, number>();
  const stream = emptyStream(shape.name, length);
  const live = new Pool();
  const model = new MatchingEngine({ id: 'model', pricePrecision: 0, amountPrecision: 0 });
  let nextId = 1;
  let mid = 1_000_000;
  for (let i = 0; i < length; i++) {
    if (i % shape.driftEvery === 0) mid += Math.floor(random() * 7) - 3;
    let roll = random();
    const side = random() < 0.5 ? 0 : 1;
    const account = Math.floor(random() * ACCOUNTS);
    stream.side[i] = side;
    stream.account[i] = account;
    const cancelSlot = roll >= shape.limitShare && roll < shape.limitShare + shape.cancelShare;
    if (cancelSlot && (live.size === 0 || live.size < shape.minLive)) roll = 0;
    let result: ReturnType<MatchingEngine['apply']>;
    if (options && random() < 0.1 && live.size > 0) {
      const id = live.pick(random());
      const order = model.order(id);
      const total = totals.get(id) ?? 0;
      stream.kind[i] = AMEND;
      stream.id[i] = id;
      if (order === undefined || !('remaining' in order)) throw new Error(`stream: live order ${id} unknown`);
      const remaining = Number(order.remaining);
      const choice = random();
      if (choice < 0.5) stream.amount[i] = total - remaining + Math.max(1, Math.floor(remaining / 2));
      else if (choice < 0.75) stream.amount[i] = total + 1 + Math.floor(random() * 10);
      else stream.price[i] = Number(order.price) + (order.side === 'buy' ? -1 : 1);
      // Literals in the bench's own shapes (bench/engine-adapters.ts), not spreads: a spread builds an
      // object of a shape of its own, which would reach the engine's call sites beside the measured ones.
      result = model.apply(
        stream.amount[i] !== 0
          ? { type: 'amend', id, amount: BigInt(stream.amount[i]!), time: i }
          : { type: 'amend', id, price: BigInt(stream.price[i]!), time: i },
      );
      if (result.ok && stream.amount[i] !== 0) totals.set(id, stream.amount[i]!);
    } else if (roll < shape.limitShare) {
      const r = random();
      const distance = Math.floor(r * r * shape.spread) + 1 - Math.floor(random() * (shape.cross + 1));
      stream.kind[i] = LIMIT;
      stream.id[i] = nextId;
      let price = side === 0 ? mid - distance : mid + distance;
      if (shape.passive) {
        const { bid, ask } = model.top();
        if (side === 0 && ask !== null && price >= Number(ask[0])) price = Number(ask[0]) - 1;
        if (side === 1 && bid !== null && price <= Number(bid[0])) price = Number(bid[0]) + 1;
      }
      stream.price[i] = price;
      stream.amount[i] = 1 + Math.floor(random() * shape.maxLimitAmount);
      if (options) {
        const t = random();
        stream.tif[i] = t < 0.1 ? 1 : t < 0.2 ? 2 : 0;
      }
      live.add(nextId);
      totals.set(nextId, stream.amount[i]!);
      const tif = stream.tif[i]!;
      result = model.apply(
        tif === 0
          ? {
              type: 'limit',
              id: nextId++,
              account: accountNames[account]!,
              side: side === 0 ? 'buy' : 'sell',
              price: BigInt(stream.price[i]!),
              amount: BigInt(stream.amount[i]!),
              time: i,
            }
          : {
              type: 'limit',
              id: nextId++,
              account: accountNames[account]!,
              side: side === 0 ? 'buy' : 'sell',
              price: BigInt(stream.price[i]!),
              amount: BigInt(stream.amount[i]!),
              time: i,
              tif: TIFS[tif]!,
            },
      );
    } else if (cancelSlot) {
      stream.kind[i] = CANCEL;
      stream.id[i] = live.pick(random());
      result = model.apply({ type: 'cancel', id: stream.id[i]!, time: i });
    } else {
      stream.kind[i] = MARKET;
      stream.id[i] = nextId;
      stream.amount[i] = 1 + Math.floor(random() * shape.maxMarketAmount);
      result = model.apply({
        type: 'market',
        id: nextId++,
        account: accountNames[account]!,
        side: side === 0 ? 'buy' : 'sell',
        amount: BigInt(stream.amount[i]!),
        budget: 10n ** 18n,
        time: i,
      });
    }
    if (!result.ok) throw new Error(`stream model refused command ${i}: ${result.code}`);
    for (const event of result.events)
      if (event.type === 'done') {
        live.remove(event.orderId);
        totals.delete(event.orderId);
      }
  }
  return stream;
}

/** Commands of each kind in a stream: the realised mix. */
export function mixOf(stream: Stream): { limit: number; cancel: number; market: number; amend: number } {
  const counts = [0, 0, 0, 0];
  for (let i = 0; i < stream.length; i++) counts[stream.kind[i]!]!++;
  return { limit: counts[LIMIT]!, cancel: counts[CANCEL]!, market: counts[MARKET]!, amend: counts[AMEND]! };
}
