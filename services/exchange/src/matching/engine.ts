import { type BookEntry, BookState, SIDES } from './book-state.js';
import { CANCELLED, FILLED } from './closed-orders.js';
import { type CommandResult, fail, type MatchingError } from './errors.js';
import { BUY, type Level, NIL, SELL, type SideCode } from './order-list.js';
import type { PriceLadder } from './price-ladder.js';
import type { EngineSnapshot } from './snapshot.js';
import type {
  AmendCommand,
  AmendedEvent,
  Asset,
  Command,
  DoneEvent,
  DoneReason,
  EngineEvent,
  LimitCommand,
  MarketSpec,
  OrderId,
  StpMode,
} from './types.js';
import { checkAmend, feeOf, type Lock, lockFor, lockForOrder } from './validate.js';

export type { BookEntry, LiveOrder } from './book-state.js';

/** Why the last `take()` stopped: the amount was reached, the book ran out, or the budget/target did. */
const STOP_DONE = 0;
const STOP_BOOK = 1;
const STOP_CAP = 2;
/** Self-trade prevention ended the taker (expire_taker, expire_both). */
const STOP_SELF = 3;

/** Self-trade prevention modes as small integers for the matching loop (STP_MODES order). */
const STP_EXPIRE_MAKER = 0;
const STP_EXPIRE_TAKER = 1;
const STP_EXPIRE_BOTH = 2;
const STP_DECREMENT = 3;
const STP_NONE = 4;
const STP_NAMES: readonly StpMode[] = ['expire_maker', 'expire_taker', 'expire_both', 'decrement', 'none'];

function stpCode(mode: StpMode | undefined): number {
  switch (mode) {
    case undefined:
    case 'expire_maker':
      return STP_EXPIRE_MAKER;
    case 'expire_taker':
      return STP_EXPIRE_TAKER;
    case 'expire_both':
      return STP_EXPIRE_BOTH;
    case 'decrement':
      return STP_DECREMENT;
    default:
      return STP_NONE;
  }
}

/** Time in force as small integers. */
const TIF_GTC = 0;
const TIF_IOC = 1;
const TIF_FOK = 2;

const MAX_SAFE = Number.MAX_SAFE_INTEGER;

/** Exact a * b as a bigint for non-negative safe integers, with one allocation when the product is safe. */
function product(a: number, b: number): bigint {
  const n = a * b;
  return n <= MAX_SAFE ? BigInt(n) : BigInt(a) * BigInt(b);
}

/** price * remaining - oldPrice * oldRemaining, exact; one bigint when both products are safe (0n shared). */
function quoteDelta(price: number, remaining: number, oldPrice: number, oldRemaining: number): bigint {
  const now = price * remaining;
  const before = oldPrice * oldRemaining;
  if (now <= MAX_SAFE && before <= MAX_SAFE) return now === before ? 0n : BigInt(now - before);
  return BigInt(price) * BigInt(remaining) - BigInt(oldPrice) * BigInt(oldRemaining);
}

/** A base amount's change as a bigint, the shared 0n when nothing changes (a move to a new price). */
function baseDelta(change: number): bigint {
  return change === 0 ? 0n : BigInt(change);
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
  /** The current taker's self-trade prevention mode (STP_*). */
  private stp = STP_EXPIRE_MAKER;
  /** Base the current taker lost to `decrement` self-trade prevention (no trade, amount reduced). */
  private decremented = 0;
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
  // The last accepted amend's plan (planAmend), in fields so that an amend allocates no plan object.
  private planSlot = NIL;
  private planPrice = 0;
  private planRemaining = 0;
  private planDelta = 0n;
  /** `planDelta` when positive (more to lock), else 0n. */
  private planLock = 0n;
  private planMoved = false;

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
    if (cmd === null || typeof cmd !== 'object') return fail('INVALID_COMMAND', 'command must be an object');
    // The command's type read once: this load sees every command shape; the code behind each branch
    // sees only its own type's shapes (see lockForOrder).
    const type = cmd.type;
    if (type === 'cancel') return this.cancel(cmd.id, cmd.account, cmd.time);
    if (type === 'amend') {
      const checked = checkAmend(this.market, cmd);
      return 'ok' in checked ? checked : this.amend(cmd.id, cmd.account, cmd.amount, cmd.price, cmd.time);
    }
    const lock = lockForOrder(this.market, cmd);
    if ('ok' in lock) return lock;
    if (cmd.id > this.maxId) {
      // Checked before the id is taken: a refused command changes nothing.
      if (
        type === 'limit' &&
        cmd.postOnly === true &&
        this.wouldTake(cmd.side === 'buy' ? BUY : SELL, Number(cmd.price))
      ) {
        return fail('POST_ONLY_WOULD_TAKE', 'a post-only order would trade at once');
      }
      this.maxId = cmd.id;
    } else if (this.live.has(cmd.id) || this.closed.has(cmd.id)) {
      return fail('DUPLICATE_ORDER_ID', `order id ${cmd.id} was already used`);
    } else if (
      type === 'limit' &&
      cmd.postOnly === true &&
      this.wouldTake(cmd.side === 'buy' ? BUY : SELL, Number(cmd.price))
    ) {
      return fail('POST_ONLY_WOULD_TAKE', 'a post-only order would trade at once');
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
        kind: type,
        price: type === 'limit' || type === 'limit_stop_loss' ? cmd.price : null,
        stopPrice: type === 'limit_stop_loss' ? cmd.stopPrice : null,
        amount: type === 'market_by_quote' ? null : cmd.amount,
        quote: type === 'market_by_quote' ? cmd.quote : null,
        lockAsset: lock.asset,
        lock: lock.amount,
      },
    ];
    this.out = events;
    if (type === 'limit' && cmd.tif !== undefined && cmd.tif !== 'gtc') {
      const ended = this.endIfUntradable(cmd, side, events[0]!, lock);
      if (ended !== null) return ended;
    }
    const account = this.store.accountId(cmd.account);
    const stp = stpCode(cmd.stp);
    switch (type) {
      case 'limit': {
        const tif =
          cmd.tif === undefined || cmd.tif === 'gtc' ? TIF_GTC : cmd.tif === 'ioc' ? TIF_IOC : TIF_FOK;
        this.runLimit(cmd.id, account, side, Number(cmd.price), Number(cmd.amount), tif, stp);
        break;
      }
      case 'limit_stop_loss':
        this.addStop(
          cmd.id,
          account,
          side,
          Number(cmd.price),
          Number(cmd.stopPrice),
          Number(cmd.amount),
          stp,
        );
        break;
      case 'market':
        this.runMarket(cmd.id, account, side, Number(cmd.amount), cmd.budget ?? 0n, 0n, stp);
        break;
      case 'market_by_quote':
        this.runMarket(cmd.id, account, side, 0, side === BUY ? cmd.quote : cmd.budget!, cmd.quote, stp);
        break;
    }
    this.runTriggered();
    return { ok: true, lockAsset: lock.asset, lock: lock.amount, events };
  }

  /**
   * An IOC or FOK limit that cannot trade ends at once with nothing traded: the same events as the
   * general path (which would find no crossing level), without the account's interning, the
   * matching loop, or a second array for the `done` event. Its `remaining` is the command's amount
   * and its release the whole lock, so both reuse those bigints. Null when it would trade (the
   * general path runs it). A method of its own so that `apply()`, which every command runs, keeps
   * its size: with this inlined there the plain stream ran measurably slower.
   */
  private endIfUntradable(
    cmd: LimitCommand,
    side: SideCode,
    accepted: EngineEvent,
    lock: Lock,
  ): CommandResult | null {
    if (this.wouldTake(side, Number(cmd.price))) return null;
    this.closed.set(cmd.id, CANCELLED);
    const done = this.doneEvent(
      cmd.id,
      cmd.account,
      side,
      cmd.tif === 'fok' ? 'fok_not_filled' : 'ioc_rest_cancelled',
      cmd.amount,
      lock.amount,
    );
    return { ok: true, lockAsset: lock.asset, lock: lock.amount, events: [accepted, done] };
  }

  /** Whether a limit at `price` on `side` would trade with the book now. */
  private wouldTake(side: SideCode, price: number): boolean {
    const best = (side === BUY ? this.asks : this.bids).best();
    if (best === undefined) return false;
    return side === BUY ? best.price <= price : best.price >= price;
  }

  /**
   * What an amend would change in the order's lock, without changing anything: `amount` > 0 must be
   * locked more, < 0 is released. The order-entry path checks the account's available balance for a
   * positive one before `apply()`.
   */
  amendLock(cmd: AmendCommand): Lock | MatchingError {
    const checked = lockFor(this.market, cmd);
    if ('ok' in checked) return checked;
    const refused = this.planAmend(cmd.id, cmd.account, cmd.amount, cmd.price);
    if (refused !== null) return refused;
    return { asset: this.store.side(this.planSlot) === BUY ? 'quote' : 'base', amount: this.planDelta };
  }

  /**
   * Checks an amend against its order and leaves the plan in the `plan*` fields (no object per
   * amend: moves are 82 % of the exchange-core-shaped stream); null when it may go ahead.
   */
  private planAmend(
    id: OrderId,
    account: string | undefined,
    newAmount: bigint | undefined,
    newPrice: bigint | undefined,
  ): MatchingError | null {
    const slot = this.live.get(id);
    const store = this.store;
    if (slot === NIL || (account !== undefined && store.accountName(store.account(slot)) !== account))
      return this.notLive(id, account, slot);
    if (store.stopPrice(slot) > 0) {
      return fail('ORDER_NOT_AMENDABLE', `order ${id} is a stop order waiting to trigger`);
    }
    const side = store.side(slot);
    const oldPrice = store.price(slot);
    const oldRemaining = store.remaining(slot);
    const filled = store.filled(slot);
    let remaining = oldRemaining;
    if (newAmount !== undefined) {
      if (filled < 0) {
        return fail(
          'ORDER_NOT_AMENDABLE',
          `order ${id} was restored without its filled amount; only its price can change`,
        );
      }
      const amount = Number(newAmount);
      if (amount <= filled) {
        return fail('AMEND_BELOW_FILLED', `amount ${newAmount} is not above the ${filled} already filled`);
      }
      remaining = amount - filled;
    }
    const price = newPrice === undefined ? oldPrice : Number(newPrice);
    if (price !== oldPrice && this.wouldTake(side, price)) {
      return fail('AMEND_WOULD_TAKE', `price ${price} would trade at once`);
    }
    this.planSlot = slot;
    this.planPrice = price;
    this.planRemaining = remaining;
    const delta =
      side === BUY
        ? quoteDelta(price, remaining, oldPrice, oldRemaining)
        : baseDelta(remaining - oldRemaining);
    this.planDelta = delta;
    // What the result locks: the delta when it grows, else the shared 0n (the sign read on numbers
    // when both products are safe, which they are but for huge orders; a bigint compare is a call).
    const now = side === BUY ? price * remaining : remaining;
    const before = side === BUY ? oldPrice * oldRemaining : oldRemaining;
    this.planLock = (now <= MAX_SAFE && before <= MAX_SAFE ? now > before : delta > 0n) ? delta : 0n;
    this.planMoved = price !== oldPrice || remaining > oldRemaining;
    return null;
  }

  /**
   * Applies an amend: in place when the remaining shrinks at the same price, else to the back of its
   * level. The command's fields come in as arguments, read once by `apply`.
   */
  private amend(
    id: OrderId,
    account: string | undefined,
    newAmount: bigint | undefined,
    newPrice: bigint | undefined,
    time: number,
  ): CommandResult {
    const refused = this.planAmend(id, account, newAmount, newPrice);
    if (refused !== null) return refused;
    this.now = time;
    const store = this.store;
    const slot = this.planSlot;
    const price = this.planPrice;
    const remaining = this.planRemaining;
    const moved = this.planMoved;
    const delta = this.planDelta;
    const side = store.side(slot);
    const ladder = this.bookLadder(side);
    const level = ladder.levelOf(store.price(slot));
    this.levelChanged(side, level);
    let target = level;
    if (!moved) {
      level.total -= store.remaining(slot) - remaining;
      store.setRemaining(slot, remaining);
    } else {
      store.unlink(level, slot);
      store.setPrice(slot, price);
      store.setRemaining(slot, remaining);
      if (price !== level.price) target = ladder.levelAt(price);
      store.push(target, slot);
      if (target !== level) {
        ladder.noteEmptied(level);
        this.levelChanged(side, target);
      }
    }
    // A new total given and the filled amount known: the event's amount is the command's, same value.
    const total = newAmount !== undefined && store.filled(slot) >= 0 ? newAmount : null;
    const events: EngineEvent[] = [
      this.amendedEvent(slot, target.bigPrice, 'amend', null, moved ? 'moved' : 'kept', delta, total),
    ];
    return { ok: true, lockAsset: side === BUY ? 'quote' : 'base', lock: this.planLock, events };
  }

  /** `bigPrice`: the order's price as a bigint, its level's (made once per level, not per event). */
  private amendedEvent(
    slot: number,
    bigPrice: bigint,
    reason: AmendedEvent['reason'],
    stp: StpMode | null,
    priority: AmendedEvent['priority'],
    lockDelta: bigint,
    total: bigint | null = null,
  ): AmendedEvent {
    const store = this.store;
    const side = store.side(slot);
    const remaining = store.remaining(slot);
    const filled = store.filled(slot);
    return {
      type: 'amended',
      seq: ++this.seq,
      time: this.now,
      market: this.market.id,
      orderId: store.id(slot),
      account: store.accountName(store.account(slot)),
      side: SIDES[side]!,
      reason,
      stp,
      price: bigPrice,
      amount: total ?? BigInt(filled < 0 ? remaining : filled + remaining),
      remaining: BigInt(remaining),
      priority,
      lockAsset: side === BUY ? 'quote' : 'base',
      lockDelta,
    };
  }

  /**
   * Why order `id` (in `slot`, or NIL) cannot be changed by `account`: filled or cancelled when known
   * to be; another account's live order is answered as not found, so its existence is not told.
   */
  private notLive(id: OrderId, account: string | undefined, slot: number): MatchingError {
    const status = account === undefined || slot === NIL ? this.closed.get(id) : undefined;
    if (status === FILLED) return fail('ORDER_ALREADY_FILLED', `order ${id} is already filled`);
    if (status === CANCELLED) return fail('ORDER_ALREADY_CANCELLED', `order ${id} is already cancelled`);
    return fail('ORDER_NOT_FOUND', `order ${id} is not known`);
  }

  private cancel(id: OrderId, account: string | undefined, time: number): CommandResult {
    const slot = this.live.get(id);
    const store = this.store;
    if (slot === NIL || (account !== undefined && store.accountName(store.account(slot)) !== account))
      return this.notLive(id, account, slot);
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
  private removeOrder(
    slot: number,
    level: Level,
    ladder: PriceLadder,
    reason: DoneReason,
    stp: StpMode | null = null,
  ): DoneEvent {
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
      stp,
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
    stp: StpMode | null = null,
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
      stp,
      status: reason === 'filled' ? 'filled' : 'cancelled',
      remaining,
      releaseAsset: side === BUY ? 'quote' : 'base',
      release,
    };
  }

  /** A limit order (new or triggered stop): match what crosses, rest the remainder (GTC), or end it. */
  private runLimit(
    id: OrderId,
    account: number,
    side: SideCode,
    price: number,
    amount: number,
    tif: number,
    stp: number,
  ): void {
    const store = this.store;
    this.stp = stp;
    if (tif === TIF_FOK && this.fillable(account, side, price, amount, stp) < amount) {
      // Fill or kill: nothing traded, no self-trade prevention ran, the whole lock goes back.
      this.closed.set(id, CANCELLED);
      const release = side === BUY ? product(price, amount) : BigInt(amount);
      this.out.push(
        this.doneEvent(id, store.accountName(account), side, 'fok_not_filled', BigInt(amount), release),
      );
      return;
    }
    this.decremented = 0;
    this.take(id, account, side, price, amount, false);
    const remaining = this.remaining;
    const decremented = this.decremented;
    if (remaining === 0 && decremented === 0) {
      this.closed.set(id, FILLED);
      this.out.push(this.doneEvent(id, store.accountName(account), side, 'filled', 0n, 0n));
      return;
    }
    const selfStopped = this.stopReason === STOP_SELF;
    if (remaining === 0 || selfStopped || tif !== TIF_GTC) {
      // Ended here: by decrement to nothing, by expire_taker/expire_both, or an IOC rest (FOK filled whole above).
      const reason: DoneReason =
        selfStopped || remaining === 0 ? 'self_trade_prevented' : 'ioc_rest_cancelled';
      const ended = remaining + decremented;
      const release = side === BUY ? product(price, ended) : BigInt(ended);
      this.closed.set(id, CANCELLED);
      this.out.push(
        this.doneEvent(
          id,
          store.accountName(account),
          side,
          reason,
          BigInt(remaining),
          release,
          reason === 'self_trade_prevented' ? STP_NAMES[stp]! : null,
        ),
      );
      return;
    }
    const slot = store.alloc(
      id,
      account,
      side,
      price,
      0,
      remaining,
      this.now,
      amount - remaining - decremented,
      stp,
    );
    const level = this.bookLadder(side).levelAt(price);
    store.push(level, slot);
    this.levelChanged(side, level);
    this.live.set(id, slot);
    if (decremented !== 0) {
      // The part decrement took is no longer the order's: its lock goes back, the rest rests.
      const release = side === BUY ? product(price, decremented) : BigInt(decremented);
      this.out.push(
        this.amendedEvent(slot, level.bigPrice, 'self_trade_prevented', 'decrement', 'kept', -release),
      );
    }
  }

  /**
   * How much of `amount` a taker could trade now without a self-trade prevention stopping it: the
   * crossing makers in priority order, own orders skipped (expire_maker), counted (none), or ending
   * the count (the other modes, which would end or reduce the taker there). Stops counting at `amount`.
   */
  private fillable(account: number, side: SideCode, limit: number, amount: number, stp: number): number {
    const book = side === BUY ? this.asks : this.bids;
    const limitKey = side === BUY ? -limit : limit;
    const store = this.store;
    let total = 0;
    for (let depth = 0; total < amount; depth++) {
      const level = book.fromTop(depth);
      if (level === undefined || level.key < limitKey) break;
      for (let maker = level.head; maker !== NIL && total < amount; maker = store.next(maker)) {
        if (store.account(maker) === account && stp !== STP_NONE) {
          if (stp === STP_EXPIRE_MAKER) continue;
          return total;
        }
        total += store.remaining(maker);
      }
    }
    return total;
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
    stp: number,
  ): void {
    const byQuote = amount === 0;
    let release: bigint;
    let remaining = 0n;
    let reason: DoneReason = 'filled';
    this.stp = stp;
    this.decremented = 0;
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
      release = funds - BigInt(cap - this.remaining - this.decremented);
      if (this.stopReason === STOP_BOOK) reason = 'no_liquidity';
      else if (this.stopReason === STOP_DONE) reason = 'budget_exhausted';
    } else {
      this.take(id, account, side, 0, amount, false);
      release = BigInt(this.remaining + this.decremented);
      remaining = BigInt(this.remaining);
      if (this.remaining !== 0) reason = 'no_liquidity';
    }
    if (this.stopReason === STOP_SELF || (this.decremented !== 0 && this.stopReason === STOP_DONE)) {
      reason = 'self_trade_prevented';
    }
    this.closed.set(id, reason === 'filled' ? FILLED : CANCELLED);
    this.out.push(
      this.doneEvent(
        id,
        this.store.accountName(account),
        side,
        reason,
        remaining,
        release,
        reason === 'self_trade_prevented' ? STP_NAMES[stp]! : null,
      ),
    );
  }

  /**
   * Matches a taker against the opposite side, best price first and FIFO within a price. `limit` is
   * the taker's limit price, 0 for a market order. When `capped`, `this.budget` (a buy's quote budget
   * or a sell's quote target) also limits each fill and is decreased by it. Leaves the unexecuted
   * amount in `this.remaining` and why it stopped in `this.stopReason`; self-trade prevention by
   * `this.stp`, base lost to `decrement` added to `this.decremented` (and taken out of the remaining).
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
    const stp = this.stp;
    let remaining = amount;
    let reason = STOP_BOOK;
    outer: while (remaining > 0) {
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
        if (store.account(maker) === account && stp !== STP_NONE) {
          if (stp === STP_EXPIRE_MAKER) {
            // The resting order goes, the taker carries on.
            this.out.push(this.removeOrder(maker, level, book, 'self_trade_prevented', 'expire_maker'));
          } else if (stp === STP_DECREMENT) {
            // Both lose the overlap without a trade; the smaller (or both) expires.
            const makerRemaining = store.remaining(maker);
            const qty = makerRemaining < cap ? makerRemaining : cap;
            cap -= qty;
            remaining -= qty;
            this.decremented += qty;
            if (qty === makerRemaining) {
              this.out.push(this.removeOrder(maker, level, book, 'self_trade_prevented', 'decrement'));
            } else {
              store.setRemaining(maker, makerRemaining - qty);
              level.total -= qty;
              const release = side === BUY ? BigInt(qty) : product(level.price, qty);
              this.out.push(
                this.amendedEvent(
                  maker,
                  level.bigPrice,
                  'self_trade_prevented',
                  'decrement',
                  'kept',
                  -release,
                ),
              );
            }
          } else {
            if (stp === STP_EXPIRE_BOTH) {
              this.out.push(this.removeOrder(maker, level, book, 'self_trade_prevented', 'expire_both'));
            }
            reason = STOP_SELF;
            break outer;
          }
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
    const makerFilled = store.filled(maker);
    if (makerFilled >= 0) store.setFilled(maker, makerFilled + qty);
    level.total -= qty;
    const makerId = store.id(maker);
    const makerAccountId = store.account(maker);
    const makerAccount = store.accountName(makerAccountId);
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
      selfTrade: makerAccountId === takerAccountId,
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
    stp: number,
  ): void {
    const store = this.store;
    const slot = store.alloc(id, account, side, price, stop, amount, this.now, 0, stp);
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
      const stp = store.stp(slot);
      // Freed first: the values are in locals, and runLimit may take the slot for the order it rests.
      store.free(slot);
      this.runLimit(id, account, side, price, remaining, TIF_GTC, stp);
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
