import type { JournalEntry } from '../ledger/entry.js';
import type { Command, EngineEvent, StpMode } from '../matching/types.js';
import { balanceKey } from './batch-inputs.js';
import type { NonceUse, OrderDelta, OrderReason, OrderRow, TradeRow } from './store.js';

/** The effects of one batch, collected while the engine runs and written at its end. */
export class BatchWork {
  readonly commands: Command[] = [];
  /** The engine's events of the batch's commands, in order (the live feed's order-by-order book). */
  readonly events: EngineEvent[] = [];
  readonly created = new Map<number, OrderRow>();
  readonly changed = new Map<number, OrderDelta>();
  readonly trades: TradeRow[] = [];
  readonly entries: JournalEntry[] = [];
  /** Orders placed under a client order id: account, client order id, order id (client-order-ids.ts). */
  readonly clientOrders: [accountId: number, clientOrderId: string, orderId: number][] = [];
  /** The API key each order of the batch was placed with, by order id (src/cancel-all/). */
  readonly orderKeys = new Map<number, number>();
  /** The nonces the batch accepted, per API key. */
  readonly nonces = new Map<number, NonceUse>();
  /** Available funds of the balances the batch checks, by `account:currency`. */
  readonly available = new Map<string, bigint>();

  /** Queues a ledger entry and follows its effect on the checked balances. */
  post(entry: JournalEntry): void {
    this.entries.push(entry);
    for (const leg of entry.legs) {
      if (leg.bucket !== 'available') continue;
      const key = balanceKey(leg.accountId, leg.currency);
      const current = this.available.get(key);
      if (current !== undefined) this.available.set(key, current + leg.amount);
    }
  }

  touch(id: number, time: number): OrderRow | OrderDelta {
    const row = this.created.get(id);
    if (row) {
      row.updatedAt = time;
      return row;
    }
    let delta = this.changed.get(id);
    if (!delta) {
      delta = { id, executed: 0n, funds: 0n, trades: 0, state: null, updatedAt: time };
      this.changed.set(id, delta);
    }
    delta.updatedAt = time;
    return delta;
  }

  fill(id: number, amount: bigint, funds: bigint, time: number): void {
    const target = this.touch(id, time);
    target.executed += amount;
    target.funds += funds;
    if ('tradesCount' in target) target.tradesCount += 1;
    else target.trades += 1;
  }

  /** An amend (or a decrement) changed the order's price and total amount. */
  amend(id: number, price: bigint, amount: bigint, time: number): void {
    const target = this.touch(id, time);
    target.price = price;
    target.amount = amount;
  }

  /** Self-trade prevention, FOK or IOC ended or reduced the order: it keeps why (087_self_trade_reason.sql). */
  explain(id: number, reason: OrderReason, stp: StpMode | null, time: number): void {
    const target = this.touch(id, time);
    target.reason = reason;
    target.stp = stp;
  }

  finish(id: number, state: OrderRow['state'], time: number): void {
    const target = this.touch(id, time);
    target.state = state;
  }

  /** The net change of available funds per balance key over the batch's ledger entries. */
  availableMoves(): Map<string, bigint> {
    const moves = new Map<string, bigint>();
    for (const entry of this.entries) {
      for (const leg of entry.legs) {
        if (leg.bucket !== 'available') continue;
        const key = balanceKey(leg.accountId, leg.currency);
        moves.set(key, (moves.get(key) ?? 0n) + leg.amount);
      }
    }
    return moves;
  }
}
