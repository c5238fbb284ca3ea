/**
 * The exchange-core-shaped command stream (issue 46): the mix of exchange-core's single-book
 * benchmark (its README: "9% GTC orders, 3% IOC orders, 6% cancel commands, 82% move commands",
 * 1,000 accounts, about 1,000 resting orders over about 750 price levels, about 6 % of commands
 * trading), seeded, stored column-wise like the other streams (streams.ts).
 *
 * How the generator keeps that shape (it follows the book with a reference run of our engine, as
 * streams.ts does, untimed):
 * - a move is an amend of a random live order to a new price within 8 ticks of its own, kept passive
 *   (a buy at most one tick below the best ask, a sell at least one above the best bid): our amend
 *   refuses a new price that would trade at once (`AMEND_WOULD_TAKE`), where exchange-core's move
 *   trades; the trades come from the other commands instead;
 * - a GTC limit is placed within `SPREAD` ticks of the mid, uniformly, so that the book spreads over
 *   about 750 levels; one in `GTC_CROSSING` crosses the best opposite price by up to 2 ticks;
 * - an IOC order crosses the best opposite price by up to 3 ticks and takes what is there;
 * - the book is held near 1,000 resting orders: below 950 a cancel slot becomes a GTC limit, above
 *   1,050 a GTC slot becomes a cancel (the printed realised mix shows what that moved).
 */
import { MatchingEngine } from '../src/matching/engine.js';
import { accountNames, emptyStream, rng, type Stream } from './streams.js';

/** Command kinds of this stream (the shared ones are LIMIT 0, CANCEL 1, MARKET 2). */
export const GTC = 0;
export const CANCEL = 1;
export const IOC = 3;
export const MOVE = 4;

const SPREAD = 800;
const GTC_CROSSING = 3;
const MOVE_TICKS = 8;
const TARGET_LIVE = 1_000;

/** Live order ids and their prices, with O(1) add, remove and random pick. */
class LiveOrders {
  private readonly ids: number[] = [];
  private readonly at = new Map<number, number>();
  readonly price = new Map<number, number>();
  readonly side = new Map<number, number>();
  get size(): number {
    return this.ids.length;
  }
  add(id: number, price: number, side: number): void {
    this.at.set(id, this.ids.length);
    this.ids.push(id);
    this.price.set(id, price);
    this.side.set(id, side);
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
    this.price.delete(id);
    this.side.delete(id);
  }
  pick(random: number): number {
    return this.ids[Math.floor(random * this.ids.length)]!;
  }
}

export interface ExchangeCoreMix {
  readonly gtc: number;
  readonly ioc: number;
  readonly cancel: number;
  readonly move: number;
  /** Commands that made at least one trade. */
  readonly trading: number;
  /** Resting orders and price levels at the end. */
  readonly resting: number;
  readonly levels: number;
}

export function generateExchangeCore(length: number, seed: number): { stream: Stream; mix: ExchangeCoreMix } {
  const random = rng(seed);
  // The kind says GTC or IOC: the stream's `tif` column is unused here.
  const stream = emptyStream('exchange-core', length);
  const live = new LiveOrders();
  const model = new MatchingEngine({ id: 'model', pricePrecision: 0, amountPrecision: 0 });
  const mid = 1_000_000;
  let nextId = 1;
  const counts = { gtc: 0, ioc: 0, cancel: 0, move: 0, trading: 0 };
  const best = () => {
    const { bid, ask } = model.top();
    return { bid: bid === null ? null : Number(bid[0]), ask: ask === null ? null : Number(ask[0]) };
  };
  for (let i = 0; i < length; i++) {
    const roll = random();
    let kind = roll < 0.09 ? GTC : roll < 0.12 ? IOC : roll < 0.18 ? CANCEL : MOVE;
    if (kind === CANCEL && live.size < TARGET_LIVE * 0.95) kind = GTC;
    else if (kind === GTC && live.size > TARGET_LIVE * 1.05) kind = CANCEL;
    if ((kind === MOVE || kind === CANCEL) && live.size === 0) kind = GTC;
    const account = Math.floor(random() * accountNames.length);
    stream.account[i] = account;
    stream.kind[i] = kind;
    let result: ReturnType<MatchingEngine['apply']>;
    if (kind === CANCEL) {
      const id = live.pick(random());
      stream.id[i] = id;
      counts.cancel++;
      result = model.apply({ type: 'cancel', id, time: i });
    } else if (kind === MOVE) {
      const id = live.pick(random());
      const side = live.side.get(id)!;
      const { bid, ask } = best();
      let price = live.price.get(id)! + Math.floor(random() * (2 * MOVE_TICKS + 1)) - MOVE_TICKS;
      if (side === 0 && ask !== null && price >= ask) price = ask - 1;
      if (side === 1 && bid !== null && price <= bid) price = bid + 1;
      if (price === live.price.get(id)) price += side === 0 ? -1 : 1;
      stream.id[i] = id;
      stream.side[i] = side;
      stream.price[i] = price;
      counts.move++;
      result = model.apply({ type: 'amend', id, price: BigInt(price), time: i });
      if (result.ok) live.price.set(id, price);
    } else {
      const side = random() < 0.5 ? 0 : 1;
      const { bid, ask } = best();
      const opposite = side === 0 ? ask : bid;
      let price: number;
      if (kind === IOC || random() * GTC_CROSSING < 1) {
        // Crossing: at or through the best opposite price (the mid when that side is empty).
        const depth = Math.floor(random() * (kind === IOC ? 4 : 3));
        const from = opposite ?? mid;
        price = side === 0 ? from + depth : from - depth;
      } else {
        const distance = 1 + Math.floor(random() * SPREAD);
        price = side === 0 ? mid - distance : mid + distance;
        if (side === 0 && ask !== null && price >= ask) price = ask - 1;
        if (side === 1 && bid !== null && price <= bid) price = bid + 1;
      }
      const amount = 1 + Math.floor(random() * (kind === IOC ? 30 : 100));
      stream.id[i] = nextId;
      stream.side[i] = side;
      stream.price[i] = price;
      stream.amount[i] = amount;
      if (kind === IOC) counts.ioc++;
      else counts.gtc++;
      result = model.apply({
        type: 'limit',
        id: nextId,
        account: accountNames[account]!,
        side: side === 0 ? 'buy' : 'sell',
        price: BigInt(price),
        amount: BigInt(amount),
        tif: kind === IOC ? 'ioc' : 'gtc',
        time: i,
      });
      if (result.ok && kind === GTC) live.add(nextId, price, side);
      nextId++;
    }
    if (!result.ok) throw new Error(`exchange-core stream: the model refused command ${i}: ${result.code}`);
    let traded = false;
    for (const event of result.events) {
      if (event.type === 'trade') traded = true;
      else if (event.type === 'done') live.remove(event.orderId);
    }
    if (traded) counts.trading++;
  }
  const levels = new Set<string>();
  for (const order of model.liveOrders().book) levels.add(`${order.side}${order.price}`);
  return { stream, mix: { ...counts, resting: live.size, levels: levels.size } };
}
