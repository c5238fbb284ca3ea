import type { Command, Side, StpMode } from '../../src/matching/types.js';

/**
 * A reference model of the book for the property tests: each price level a plain FIFO array of
 * orders, rebuilt from the rules as written (README "Amend", "Time in force", post-only), not from
 * the engine's structures. It covers limit (gtc/ioc/fok, post-only), market by base, cancel and amend
 * with the self-trade modes `none`, `expire_maker` and `expire_taker`; stops, market_by_quote,
 * `decrement`/`expire_both` and budgets are out of its scope (the caller does not send them).
 */
export interface ModelOrder {
  readonly id: number;
  readonly account: string;
  readonly side: Side;
  price: number;
  remaining: number;
  filled: number;
}

/** A trade as the model sees it: who took from whom, at which price, how much. */
export interface ModelTrade {
  readonly taker: number;
  readonly maker: number;
  readonly price: number;
  readonly amount: number;
}

export type ModelResult = { ok: true; trades: ModelTrade[] } | { ok: false; code: string };

type ModelStp = Extract<StpMode, 'none' | 'expire_maker' | 'expire_taker'>;

export class BookModel {
  /** `side@price` to the level's queue, front first. */
  private readonly levels = new Map<string, ModelOrder[]>();
  private readonly live = new Map<number, ModelOrder>();

  /** Live orders in id order (what an amend or cancel stream may aim at). */
  liveOrders(): ModelOrder[] {
    return [...this.live.values()].sort((a, b) => a.id - b.id);
  }

  order(id: number): ModelOrder | undefined {
    return this.live.get(id);
  }

  /** Each level's queue as `id:remaining` strings, front first, keyed `side@price`. */
  queues(): Record<string, string[]> {
    const out: Record<string, string[]> = {};
    for (const [key, queue] of this.levels) {
      if (queue.length > 0) out[key] = queue.map((o) => `${o.id}:${o.remaining}`);
    }
    return out;
  }

  apply(cmd: Command): ModelResult {
    switch (cmd.type) {
      case 'limit': {
        const price = Number(cmd.price);
        if (cmd.postOnly === true && this.crosses(cmd.side, price)) {
          return { ok: false, code: 'POST_ONLY_WOULD_TAKE' };
        }
        const stp = (cmd.stp ?? 'expire_maker') as ModelStp;
        const amount = Number(cmd.amount);
        const tif = cmd.tif ?? 'gtc';
        // FOK counts crossing makers in priority order first; short of its amount it ends untouched.
        if (tif === 'fok' && this.fillable(cmd.account, cmd.side, price, amount, stp) < amount) {
          return { ok: true, trades: [] };
        }
        const { trades, remaining, ended } = this.take(cmd.id, cmd.account, cmd.side, price, amount, stp);
        if (remaining > 0 && !ended && tif === 'gtc') {
          this.rest({
            id: cmd.id,
            account: cmd.account,
            side: cmd.side,
            price,
            remaining,
            filled: amount - remaining,
          });
        }
        return { ok: true, trades };
      }
      case 'market': {
        const stp = (cmd.stp ?? 'expire_maker') as ModelStp;
        const limit = cmd.side === 'buy' ? Number.POSITIVE_INFINITY : 0;
        return {
          ok: true,
          trades: this.take(cmd.id, cmd.account, cmd.side, limit, Number(cmd.amount), stp).trades,
        };
      }
      case 'cancel': {
        const order = this.live.get(cmd.id);
        if (order === undefined) return { ok: false, code: 'NOT_LIVE' };
        this.remove(order);
        return { ok: true, trades: [] };
      }
      case 'amend':
        return this.amend(cmd);
      default:
        throw new Error(`the book model does not cover ${cmd.type}`);
    }
  }

  private amend(cmd: Extract<Command, { type: 'amend' }>): ModelResult {
    const order = this.live.get(cmd.id);
    if (order === undefined) return { ok: false, code: 'NOT_LIVE' };
    let remaining = order.remaining;
    if (cmd.amount !== undefined) {
      if (Number(cmd.amount) <= order.filled) return { ok: false, code: 'AMEND_BELOW_FILLED' };
      remaining = Number(cmd.amount) - order.filled;
    }
    const price = cmd.price === undefined ? order.price : Number(cmd.price);
    if (price !== order.price && this.crosses(order.side, price)) {
      return { ok: false, code: 'AMEND_WOULD_TAKE' };
    }
    if (price === order.price && remaining <= order.remaining) {
      // Same price, not larger: keeps its place.
      order.remaining = remaining;
    } else {
      // New price or a larger remaining: to the back of its (new) level.
      this.remove(order);
      order.price = price;
      order.remaining = remaining;
      this.rest(order);
    }
    return { ok: true, trades: [] };
  }

  /** Opposite levels best first, those a taker at `limit` crosses. */
  private crossing(side: Side, limit: number): ModelOrder[][] {
    const other: Side = side === 'buy' ? 'sell' : 'buy';
    const levels: { price: number; queue: ModelOrder[] }[] = [];
    for (const [key, queue] of this.levels) {
      const [s, p] = key.split('@') as [Side, string];
      const price = Number(p);
      if (s !== other || queue.length === 0) continue;
      if (side === 'buy' ? price <= limit : price >= limit) levels.push({ price, queue });
    }
    levels.sort((a, b) => (side === 'buy' ? a.price - b.price : b.price - a.price));
    return levels.map((l) => l.queue);
  }

  private crosses(side: Side, price: number): boolean {
    return this.crossing(side, price).length > 0;
  }

  private fillable(account: string, side: Side, limit: number, amount: number, stp: ModelStp): number {
    let total = 0;
    for (const queue of this.crossing(side, limit)) {
      for (const maker of queue) {
        if (total >= amount) return total;
        if (maker.account === account && stp !== 'none') {
          if (stp === 'expire_maker') continue;
          return total;
        }
        total += maker.remaining;
      }
    }
    return total;
  }

  private take(
    taker: number,
    account: string,
    side: Side,
    limit: number,
    amount: number,
    stp: ModelStp,
  ): { trades: ModelTrade[]; remaining: number; ended: boolean } {
    const trades: ModelTrade[] = [];
    let remaining = amount;
    for (const queue of this.crossing(side, limit)) {
      for (const maker of [...queue]) {
        if (remaining === 0) return { trades, remaining, ended: false };
        if (maker.account === account && stp !== 'none') {
          if (stp === 'expire_taker') return { trades, remaining, ended: true };
          this.remove(maker);
          continue;
        }
        const size = Math.min(remaining, maker.remaining);
        trades.push({ taker, maker: maker.id, price: maker.price, amount: size });
        remaining -= size;
        maker.remaining -= size;
        maker.filled += size;
        if (maker.remaining === 0) this.remove(maker);
      }
    }
    return { trades, remaining, ended: false };
  }

  private rest(order: ModelOrder): void {
    const key = `${order.side}@${order.price}`;
    const queue = this.levels.get(key) ?? [];
    queue.push(order);
    this.levels.set(key, queue);
    this.live.set(order.id, order);
  }

  private remove(order: ModelOrder): void {
    const key = `${order.side}@${order.price}`;
    const queue = this.levels.get(key) ?? [];
    const at = queue.indexOf(order);
    if (at >= 0) queue.splice(at, 1);
    if (queue.length === 0) this.levels.delete(key);
    this.live.delete(order.id);
  }
}
