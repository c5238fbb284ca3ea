import { type BookEntry, BookState, SIDES } from './book-state.js';
import { CANCELLED, FILLED } from './closed-orders.js';
import { type CommandResult, fail } from './errors.js';
import { BUY, type Level, NIL, SELL, type SideCode } from './order-list.js';
import type { PriceLadder } from './price-ladder.js';
import type { EngineSnapshot } from './snapshot.js';
import type { Asset, Command, DoneEvent, DoneReason, EngineEvent, MarketSpec, OrderId } from './types.js';
import { feeOf, lockFor } from './validate.js';

export type { BookEntry, LiveOrder } from './book-state.js';

/** Why the last `take()` stopped: the amount was reached, the book ran out, or the budget/target did. */
const STOP_DONE = 0;
const STOP_BOOK = 1;
const STOP_CAP = 2;

const MAX_SAFE = Number.MAX_SAFE_INTEGER;

/** Exact a * b as a bigint for non-negative safe integers, with one allocation when the product is safe. */
function product(a: number, b: number): bigint {
  const n = a * b;
  return n <= MAX_SAFE ? BigInt(n) : BigInt(a) * BigInt(b);
}

/**
 * One market's order book and matching rules: a single-writer state machine. `apply(command)` runs
 * one command to completion (including stop orders it triggers) and returns the events it produced;
 * the same command sequence from the same state always produces the same events. No I/O, no clock:
 * time comes in on the command. The state and its queries are in `BookState` (book-state.ts).
 */
export class MatchingEngine extends BookState {
  private out: EngineEvent[] = [];
  private now = 0;
  /** Record slots of stops triggered by the current command, in trigger order. */
  private readonly triggered: number[] = [];
  private readonly lotSize: number;
  private readonly bigLot: bigint;
  private readonly makerFee: bigint;
  private readonly takerFee: bigint;
  // Results of take(), kept in fields so that the hot path allocates nothing for them.
  private remaining = 0;
  private budget = 0n;
  private stopReason = STOP_DONE;
  /**
   * The book levels (bids, asks by side code) changed since the last `takeChangedLevels()`, in the
   * order first changed, while followed (`followLevels()`); null otherwise, so replays and checkpoints
   * pay nothing. A level is listed once per round (`Level.changedIn`); one dropped from its ladder
   * and made again at the same price in the same round is listed as two objects, the dropped (empty)
   * one first, so the entries applied in order give the level as it is.
   */
  private changedLevels: [Level[], Level[]] | null = null;
  /**
   * How many of each list's slots this round filled: the lists keep their length between rounds and
   * are overwritten from the start, so recording a level is a store, not an array that grows again
   * (the slots past the count hold levels of earlier rounds until overwritten; never read).
   */
  private changedCounts: [number, number] = [0, 0];
  /** The round `changedLevels` collects (never 0, the value of a level never recorded). */
  private levelRound = 1;

  constructor(spec: MarketSpec) {
    super(spec);
    this.lotSize = Number(this.market.lotSize);
    this.bigLot = this.market.lotSize;
    this.makerFee = this.market.makerFeePpm;
    this.takerFee = this.market.takerFeePpm;
  }

  /** A new engine in exactly the state `snapshot()` captured: same orders, same priority, same counters. */
  static restore(spec: MarketSpec, snapshot: EngineSnapshot): MatchingEngine {
    const engine = new MatchingEngine(spec);
    engine.load(snapshot);
    return engine;
  }

  /** Starts recording which book levels the commands change (see `takeChangedLevels`). */
  followLevels(): void {
    this.changedLevels ??= [[], []];
  }

  /** Records that `level` of `side` changed (while followed). */
  private levelChanged(side: SideCode, level: Level): void {
    const changed = this.changedLevels;
    if (changed === null || level.changedIn === this.levelRound) return;
    level.changedIn = this.levelRound;
    changed[side][this.changedCounts[side]++] = level;
  }

  /**
   * The book levels changed since the last call, as they are now (`volume` 0 and `orders` 0: the
   * level is gone), in no particular order; empty unless `followLevels()` was called. Costs the
   * number of levels changed, not the depth of the book.
   */
  takeChangedLevels(): { bids: BookEntry[]; asks: BookEntry[] } {
    const changed = this.changedLevels;
    if (changed === null) return { bids: [], asks: [] };
    this.levelRound += 1;
    const counts = this.changedCounts;
    const taken = {
      bids: entriesOf(changed[BUY], counts[BUY]),
      asks: entriesOf(changed[SELL], counts[SELL]),
    };
    counts[BUY] = 0;
    counts[SELL] = 0;
    return taken;
  }

  apply(cmd: Command): CommandResult {
    const lock = lockFor(this.market, cmd);
    if ('ok' in lock) return lock;
    if (cmd.type === 'cancel') return this.cancel(cmd.id, cmd.account, cmd.time);
    if (cmd.id > this.maxId) this.maxId = cmd.id;
    else if (this.live.has(cmd.id) || this.closed.has(cmd.id)) {
      return fail('DUPLICATE_ORDER_ID', `order id ${cmd.id} was already used`);
    }
    this.now = cmd.time;
    const side: SideCode = cmd.side === 'buy' ? BUY : SELL;
    // Built with its first event in place: a literal sized for it, rather than an empty array grown by push.
    const events: EngineEvent[] = [
      {
        type: 'accepted',
        seq: ++this.seq,
        time: cmd.time,
        market: this.market.id,
        orderId: cmd.id,
        account: cmd.account,
        side: cmd.side,
        kind: cmd.type,
        price: cmd.type === 'limit' || cmd.type === 'limit_stop_loss' ? cmd.price : null,
        stopPrice: cmd.type === 'limit_stop_loss' ? cmd.stopPrice : null,
        amount: cmd.type === 'market_by_quote' ? null : cmd.amount,
        quote: cmd.type === 'market_by_quote' ? cmd.quote : null,
        lockAsset: lock.asset,
        lock: lock.amount,
      },
    ];
    this.out = events;
    const account = this.store.accountId(cmd.account);
    switch (cmd.type) {
      case 'limit':
        this.runLimit(cmd.id, account, side, Number(cmd.price), Number(cmd.amount));
        break;
      case 'limit_stop_loss':
        this.addStop(cmd.id, account, side, Number(cmd.price), Number(cmd.stopPrice), Number(cmd.amount));
        break;
      case 'market':
        this.runMarket(cmd.id, account, side, Number(cmd.amount), cmd.budget ?? 0n, 0n);
        break;
      case 'market_by_quote':
        this.runMarket(cmd.id, account, side, 0, side === BUY ? cmd.quote : cmd.budget!, cmd.quote);
        break;
    }
    this.runTriggered();
    return { ok: true, lockAsset: lock.asset, lock: lock.amount, events };
  }

  private cancel(id: OrderId, account: string | undefined, time: number): CommandResult {
    const slot = this.live.get(id);
    const store = this.store;
    if (slot === NIL || (account !== undefined && store.accountName(store.account(slot)) !== account)) {
      const status = account === undefined || slot === NIL ? this.closed.get(id) : undefined;
      if (status === FILLED) return fail('ORDER_ALREADY_FILLED', `order ${id} is already filled`);
      if (status === CANCELLED) return fail('ORDER_ALREADY_CANCELLED', `order ${id} is already cancelled`);
      return fail('ORDER_NOT_FOUND', `order ${id} is not known`);
    }
    this.now = time;
    const side = store.side(slot);
    const stop = store.stopPrice(slot);
    const ladder = stop > 0 ? this.stopLadder(side) : this.bookLadder(side);
    const level = ladder.levelOf(stop > 0 ? stop : store.price(slot));
    if (stop === 0) this.levelChanged(side, level);
    // A literal holding its one event: an empty array grown by a push would get room for 17.
    const events: EngineEvent[] = [this.removeOrder(slot, level, ladder, 'cancelled')];
    const asset: Asset = side === BUY ? 'quote' : 'base';
    return { ok: true, lockAsset: asset, lock: 0n, events };
  }

  /** Unlinks a live order and records it closed; returns its `done` event (the caller emits it). */
  private removeOrder(slot: number, level: Level, ladder: PriceLadder, reason: DoneReason): DoneEvent {
    const store = this.store;
    const id = store.id(slot);
    const side = store.side(slot);
    const remaining = store.remaining(slot);
    store.unlink(level, slot);
    ladder.noteEmptied(level);
    this.live.delete(id);
    this.closed.set(id, CANCELLED);
    const bigRemaining = BigInt(remaining);
    const release = side === BUY ? product(store.price(slot), remaining) : bigRemaining;
    const done = this.doneEvent(
      id,
      store.accountName(store.account(slot)),
      side,
      reason,
      bigRemaining,
      release,
    );
    store.free(slot);
    return done;
  }

  private doneEvent(
    id: OrderId,
    account: string,
    side: SideCode,
    reason: DoneReason,
    remaining: bigint,
    release: bigint,
  ): DoneEvent {
    return {
      type: 'done',
      seq: ++this.seq,
      time: this.now,
      market: this.market.id,
      orderId: id,
      account,
      side: SIDES[side]!,
      reason,
      status: reason === 'filled' ? 'filled' : 'cancelled',
      remaining,
      releaseAsset: side === BUY ? 'quote' : 'base',
      release,
    };
  }

  /** A limit order (new or triggered stop): match what crosses, rest the remainder. */
  private runLimit(id: OrderId, account: number, side: SideCode, price: number, amount: number): void {
    this.take(id, account, side, price, amount, false);
    const remaining = this.remaining;
    if (remaining === 0) {
      this.closed.set(id, FILLED);
      this.out.push(this.doneEvent(id, this.store.accountName(account), side, 'filled', 0n, 0n));
      return;
    }
    const store = this.store;
    const slot = store.alloc(id, account, side, price, 0, remaining, this.now);
    const level = this.bookLadder(side).levelAt(price);
    store.push(level, slot);
    this.levelChanged(side, level);
    this.live.set(id, slot);
  }

  /**
   * A market order by base `amount` (0 for by-quote). A buy spends from the locked quote `funds`
   * (its budget, or the quote of a by-quote buy); a by-quote sell sells at most `funds` base until it
   * has received `target` quote.
   */
  private runMarket(
    id: OrderId,
    account: number,
    side: SideCode,
    amount: number,
    funds: bigint,
    target: bigint,
  ): void {
    const byQuote = amount === 0;
    let release: bigint;
    let remaining = 0n;
    let reason: DoneReason = 'filled';
    if (side === BUY) {
      this.budget = funds;
      this.take(id, account, side, 0, byQuote ? Number.MAX_SAFE_INTEGER : amount, true);
      release = this.budget;
      if (!byQuote) remaining = BigInt(this.remaining);
      if (this.stopReason === STOP_BOOK) reason = 'no_liquidity';
      else if (!byQuote && this.stopReason === STOP_CAP) reason = 'budget_exhausted';
    } else if (byQuote) {
      const cap = Number(funds) - (Number(funds) % this.lotSize);
      this.budget = target;
      this.take(id, account, side, 0, cap, true);
      release = funds - BigInt(cap - this.remaining);
      if (this.stopReason === STOP_BOOK) reason = 'no_liquidity';
      else if (this.stopReason === STOP_DONE) reason = 'budget_exhausted';
    } else {
      this.take(id, account, side, 0, amount, false);
      release = BigInt(this.remaining);
      remaining = release;
      if (this.remaining !== 0) reason = 'no_liquidity';
    }
    this.closed.set(id, reason === 'filled' ? FILLED : CANCELLED);
    this.out.push(this.doneEvent(id, this.store.accountName(account), side, reason, remaining, release));
  }

  /**
   * Matches a taker against the opposite side, best price first and FIFO within a price. `limit` is
   * the taker's limit price, 0 for a market order. When `capped`, `this.budget` (a buy's quote budget
   * or a sell's quote target) also limits each fill and is decreased by it. Leaves the unexecuted
   * amount in `this.remaining` and why it stopped in `this.stopReason`.
   */
  private take(
    id: OrderId,
    account: number,
    side: SideCode,
    limit: number,
    amount: number,
    capped: boolean,
  ): void {
    const book = side === BUY ? this.asks : this.bids;
    // Level keys grow towards the best price; a level crosses while key >= limitKey.
    const limitKey = limit === 0 ? Number.NEGATIVE_INFINITY : side === BUY ? -limit : limit;
    const lot = this.lotSize === 1 ? null : this.bigLot;
    const store = this.store;
    let remaining = amount;
    let reason = STOP_BOOK;
    while (remaining > 0) {
      const level = book.best();
      if (level === undefined || level.key < limitKey) break;
      let cap = remaining;
      if (capped) {
        // How many whole lots the remaining budget (buy) or target (sell) covers at this price.
        const perLot = lot === null ? level.bigPrice : level.bigPrice * lot;
        const lots = Number(this.budget / perLot) * this.lotSize;
        if (lots === 0) {
          reason = STOP_CAP;
          break;
        }
        if (lots < cap) cap = lots;
      }
      // Fills and self-trade cancels change only the levels the taker reaches.
      this.levelChanged(side === BUY ? SELL : BUY, level);
      let maker = level.head;
      while (maker !== NIL && cap > 0) {
        const next = store.next(maker);
        if (store.account(maker) === account) {
          // Self-trade prevention, "cancel oldest": the resting order goes, the taker carries on.
          this.out.push(this.removeOrder(maker, level, book, 'self_trade'));
        } else {
          const qty = Math.min(store.remaining(maker), cap);
          const quote = this.fill(id, account, side, limit, maker, level, book, qty);
          cap -= qty;
          remaining -= qty;
          if (capped) this.budget -= quote;
        }
        maker = next;
      }
    }
    if (remaining === 0) reason = STOP_DONE;
    this.remaining = remaining;
    this.stopReason = reason;
  }

  private fill(
    takerId: OrderId,
    takerAccountId: number,
    takerSide: SideCode,
    takerLimit: number,
    maker: number,
    level: Level,
    book: PriceLadder,
    qty: number,
  ): bigint {
    const store = this.store;
    const price = level.price;
    const bigQty = BigInt(qty);
    const quote = product(price, qty);
    const makerRemaining = store.remaining(maker) - qty;
    store.setRemaining(maker, makerRemaining);
    level.total -= qty;
    const makerId = store.id(maker);
    const makerAccount = store.accountName(store.account(maker));
    const takerAccount = store.accountName(takerAccountId);
    const takerBuys = takerSide === BUY;
    this.out.push({
      type: 'trade',
      seq: ++this.seq,
      time: this.now,
      market: this.market.id,
      tradeId: ++this.tradeSeq,
      price: level.bigPrice,
      amount: bigQty,
      quote,
      takerSide: SIDES[takerSide]!,
      buyOrderId: takerBuys ? takerId : makerId,
      buyAccount: takerBuys ? takerAccount : makerAccount,
      sellOrderId: takerBuys ? makerId : takerId,
      sellAccount: takerBuys ? makerAccount : takerAccount,
      buyerFee: feeOf(bigQty, takerBuys ? this.takerFee : this.makerFee),
      sellerFee: feeOf(quote, takerBuys ? this.makerFee : this.takerFee),
      buyerRelease: takerBuys && takerLimit > price ? product(takerLimit - price, qty) : 0n,
    });
    if (makerRemaining === 0) {
      store.unlink(level, maker);
      book.noteEmptied(level);
      this.live.delete(makerId);
      this.closed.set(makerId, FILLED);
      this.out.push(this.doneEvent(makerId, makerAccount, store.side(maker), 'filled', 0n, 0n));
      store.free(maker);
    }
    this.last = price;
    this.checkStops();
    return quote;
  }

  private addStop(
    id: OrderId,
    account: number,
    side: SideCode,
    price: number,
    stop: number,
    amount: number,
  ): void {
    const store = this.store;
    const slot = store.alloc(id, account, side, price, stop, amount, this.now);
    store.push(this.stopLadder(side).levelAt(stop), slot);
    this.live.set(id, slot);
    if (this.last !== 0) this.checkStops();
  }

  /** Moves every stop the last price has reached to the trigger queue, nearest stop first, FIFO per price. */
  private checkStops(): void {
    if (!this.buyStops.hasLevels && !this.sellStops.hasLevels) return;
    const last = this.last;
    let level = this.buyStops.best();
    while (level !== undefined && level.price <= last) {
      this.triggerLevel(level, this.buyStops);
      level = this.buyStops.best();
    }
    level = this.sellStops.best();
    while (level !== undefined && level.price >= last) {
      this.triggerLevel(level, this.sellStops);
      level = this.sellStops.best();
    }
  }

  private triggerLevel(level: Level, ladder: PriceLadder): void {
    const store = this.store;
    for (let slot = level.head; slot !== NIL; slot = level.head) {
      store.unlink(level, slot);
      this.triggered.push(slot);
      this.out.push({
        type: 'stop_triggered',
        seq: ++this.seq,
        time: this.now,
        market: this.market.id,
        orderId: store.id(slot),
        account: store.accountName(store.account(slot)),
        side: SIDES[store.side(slot)]!,
        stopPrice: BigInt(store.stopPrice(slot)),
        lastPrice: BigInt(this.last),
      });
    }
    ladder.noteEmptied(level);
  }

  /** Triggered stops enter as limit orders in trigger order; ones they trigger join the queue's end. */
  private runTriggered(): void {
    const queue = this.triggered;
    const store = this.store;
    for (let i = 0; i < queue.length; i++) {
      const slot = queue[i]!;
      const id = store.id(slot);
      this.live.delete(id);
      const account = store.account(slot);
      const side = store.side(slot);
      const price = store.price(slot);
      const remaining = store.remaining(slot);
      // Freed first: the values are in locals, and runLimit may take the slot for the order it rests.
      store.free(slot);
      this.runLimit(id, account, side, price, remaining);
    }
    if (queue.length !== 0) queue.length = 0;
  }

  protected bookLadder(side: SideCode): PriceLadder {
    return side === BUY ? this.bids : this.asks;
  }

  protected stopLadder(side: SideCode): PriceLadder {
    return side === BUY ? this.buyStops : this.sellStops;
  }
}

/** The first `count` levels as book entries now (volume 0, orders 0: gone). */
function entriesOf(levels: Level[], count: number): BookEntry[] {
  const out: BookEntry[] = [];
  for (let i = 0; i < count; i++) {
    const level = levels[i]!;
    out.push(
      level.count === 0 ? [level.bigPrice, 0n, 0] : [level.bigPrice, BigInt(level.total), level.count],
    );
  }
  return out;
}
