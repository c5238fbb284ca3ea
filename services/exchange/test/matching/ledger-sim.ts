import type { MatchingEngine } from '../../src/matching/engine.js';
import type { CommandResult } from '../../src/matching/errors.js';
import type { Asset, Command, EngineEvent } from '../../src/matching/types.js';
import { lockFor } from '../../src/matching/validate.js';

/**
 * Test-only reference ledger: balances settled purely from engine events, following the rules in
 * src/matching/README.md. It locks before submitting (refusing what the account cannot cover, as the
 * real order-entry path must), and keeps per-order locks so that it can check, after every command,
 * that every lock is accounted for to the last minor unit.
 */
interface Balance {
  available: bigint;
  locked: bigint;
}

interface OrderTrack {
  readonly account: string;
  readonly asset: Asset;
  locked: bigint;
  amount: bigint | null;
  readonly quote: bigint | null;
  filledBase: bigint;
  filledQuote: bigint;
}

export class LedgerSim {
  private readonly balances = new Map<string, Record<Asset, Balance>>();
  readonly fees: Record<Asset, bigint> = { base: 0n, quote: 0n };
  private readonly deposited: Record<Asset, bigint> = { base: 0n, quote: 0n };
  private readonly orders = new Map<number, OrderTrack>();
  /** Problems found while applying events; the invariant check reports them. */
  readonly violations: string[] = [];

  deposit(account: string, asset: Asset, amount: bigint): void {
    this.account(account)[asset].available += amount;
    this.deposited[asset] += amount;
  }

  balance(account: string, asset: Asset): Balance {
    return { ...this.account(account)[asset] };
  }

  /** Locks and submits like the order-entry path; `'INSUFFICIENT_FUNDS'` when the account cannot cover it. */
  submit(engine: MatchingEngine, cmd: Command): CommandResult | 'INSUFFICIENT_FUNDS' {
    if (cmd.type === 'amend') {
      // An amend locks more only when it grows the order's reserve: what the engine says it would take.
      const lock = engine.amendLock(cmd);
      const owner = engine.order(cmd.id);
      if ('amount' in lock && lock.amount > 0n && owner !== undefined && 'account' in owner) {
        if (this.account(owner.account)[lock.asset].available < lock.amount) return 'INSUFFICIENT_FUNDS';
      }
    } else if (cmd.type !== 'cancel') {
      const lock = lockFor(engine.market, cmd);
      if ('amount' in lock && this.account(cmd.account)[lock.asset].available < lock.amount) {
        return 'INSUFFICIENT_FUNDS';
      }
    }
    const result = engine.apply(cmd);
    if (result.ok) for (const event of result.events) this.apply(event);
    return result;
  }

  apply(event: EngineEvent): void {
    switch (event.type) {
      case 'accepted': {
        const bal = this.account(event.account)[event.lockAsset];
        bal.available -= event.lock;
        bal.locked += event.lock;
        this.orders.set(event.orderId, {
          account: event.account,
          asset: event.lockAsset,
          locked: event.lock,
          amount: event.amount,
          quote: event.quote,
          filledBase: 0n,
          filledQuote: 0n,
        });
        break;
      }
      case 'trade': {
        const buyer = this.account(event.buyAccount);
        const seller = this.account(event.sellAccount);
        buyer.quote.locked -= event.quote + event.buyerRelease;
        buyer.quote.available += event.buyerRelease;
        buyer.base.available += event.amount - event.buyerFee;
        seller.base.locked -= event.amount;
        seller.quote.available += event.quote - event.sellerFee;
        this.fees.base += event.buyerFee;
        this.fees.quote += event.sellerFee;
        this.track(event.buyOrderId, event.quote + event.buyerRelease, event);
        this.track(event.sellOrderId, event.amount, event);
        break;
      }
      case 'done': {
        const bal = this.account(event.account)[event.releaseAsset];
        bal.locked -= event.release;
        bal.available += event.release;
        const order = this.orders.get(event.orderId);
        if (order === undefined) this.violations.push(`done for unknown order ${event.orderId}`);
        else if (order.locked !== event.release) {
          this.violations.push(`order ${event.orderId} releases ${event.release} but holds ${order.locked}`);
        }
        this.orders.delete(event.orderId);
        break;
      }
      case 'stop_triggered':
        break;
      case 'amended': {
        const bal = this.account(event.account)[event.lockAsset];
        bal.available -= event.lockDelta;
        bal.locked += event.lockDelta;
        const order = this.orders.get(event.orderId);
        if (order === undefined) this.violations.push(`amend of unknown order ${event.orderId}`);
        else {
          order.locked += event.lockDelta;
          if (order.amount !== null) order.amount = event.amount;
          if (order.locked < 0n) this.violations.push(`order ${event.orderId} amended below its use`);
        }
        break;
      }
    }
  }

  private track(orderId: number, used: bigint, trade: Extract<EngineEvent, { type: 'trade' }>): void {
    const order = this.orders.get(orderId);
    if (order === undefined) {
      this.violations.push(`trade ${trade.tradeId} for unknown order ${orderId}`);
      return;
    }
    order.locked -= used;
    order.filledBase += trade.amount;
    order.filledQuote += trade.quote;
    if (order.locked < 0n) this.violations.push(`order ${orderId} used more than it locked`);
    if (order.amount !== null && order.filledBase > order.amount) {
      this.violations.push(`order ${orderId} filled ${order.filledBase} beyond its amount ${order.amount}`);
    }
    if (order.quote !== null && order.filledQuote > order.quote) {
      this.violations.push(`order ${orderId} filled ${order.filledQuote} quote beyond ${order.quote}`);
    }
  }

  /** Every invariant, as a list of violations (empty when all hold). */
  check(): string[] {
    const problems = [...this.violations];
    const total: Record<Asset, bigint> = { base: this.fees.base, quote: this.fees.quote };
    const lockedByOrders = new Map<string, bigint>();
    for (const order of this.orders.values()) {
      const key = `${order.account}/${order.asset}`;
      lockedByOrders.set(key, (lockedByOrders.get(key) ?? 0n) + order.locked);
    }
    for (const [name, account] of this.balances) {
      for (const asset of ['base', 'quote'] as const) {
        const { available, locked } = account[asset];
        if (available < 0n || locked < 0n) problems.push(`${name} ${asset} negative: ${available}/${locked}`);
        if (locked !== (lockedByOrders.get(`${name}/${asset}`) ?? 0n)) {
          problems.push(`${name} ${asset} locked ${locked} differs from its open orders' locks`);
        }
        total[asset] += available + locked;
      }
    }
    for (const asset of ['base', 'quote'] as const) {
      if (total[asset] !== this.deposited[asset]) {
        problems.push(`${asset} not conserved: ${total[asset]} vs deposited ${this.deposited[asset]}`);
      }
    }
    return problems;
  }

  openOrders(): number {
    return this.orders.size;
  }

  private account(name: string): Record<Asset, Balance> {
    let account = this.balances.get(name);
    if (account === undefined) {
      account = { base: { available: 0n, locked: 0n }, quote: { available: 0n, locked: 0n } };
      this.balances.set(name, account);
    }
    return account;
  }
}
