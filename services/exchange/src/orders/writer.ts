import type { Database } from '../db/database.js';
import type { DeferredNonce } from '../http/request-context.js';
import { type JournalEntry, netEntry } from '../ledger/entry.js';
import { type BookEntry, MatchingEngine } from '../matching/engine.js';
import type { EngineSnapshot } from '../matching/snapshot.js';
import type { Command, EngineEvent } from '../matching/types.js';
import { lockFor } from '../matching/validate.js';
import { type BatchInputs, balanceKey, fundsNeeded } from './batch-inputs.js';
import type { TradingMarket } from './markets.js';
import type { OrderOutcome, OrderRefusal, OrderRequest } from './requests.js';
import { lockEntry, releaseEntry, tradeEntry } from './settlement.js';
import {
  commandLog,
  type KeyNonces,
  NO_NONCE,
  type NonceUse,
  type OrderDelta,
  type OrderRow,
  readBatch,
  type TradeRow,
  writeBatch,
} from './store.js';

/** What the writers share: storage, the clock, the fee account and the global id sequences. */
export interface WriterContext {
  readonly db: Database;
  readonly now: () => number;
  readonly feeAccountId: number;
  /**
   * Runs batches one at a time across markets. Batches of different markets touch the same balances
   * (a maker's funds, an account trading two markets): taking turns, each batch reads what the one
   * before wrote and `inputs` stays current, so batches rarely have to be computed twice. The
   * engines stay separate and fast, and each market's queue keeps filling meanwhile, so waiting
   * makes its next batch larger.
   */
  exclusive<T>(fn: () => Promise<T>): Promise<T>;
  /** Balances and API key nonces remembered between batches (see batch-inputs.ts). */
  readonly inputs: BatchInputs;
  nextOrderId(): number;
  nextTradeId(): number;
  /** Committed commands between in-memory checkpoints of each engine; CHECKPOINT_EVERY by default. */
  readonly checkpointEvery?: number;
}

interface Pending {
  readonly request: OrderRequest;
  readonly nonce: DeferredNonce | undefined;
  readonly resolve: (outcome: OrderOutcome) => void;
  readonly reject: (error: unknown) => void;
}

/** The committed state of a market's book, as public market data shows it. */
export interface BookView {
  readonly bids: readonly BookEntry[];
  readonly asks: readonly BookEntry[];
  readonly lastPrice: bigint | null;
}

/** Largest number of requests committed in one statement. */
const MAX_BATCH = 256;
/**
 * Failures after which a batch is computed again: deadlock and serialisation failures, and SVC01 (the
 * balances or nonces the batch was computed on changed before its write; see writeBatch).
 */
const RETRYABLE = new Set(['40P01', '40001', 'SVC01']);
const ATTEMPTS = 8;
/** Committed commands between two in-memory checkpoints of the engine (see MarketWriter.rollBack). */
export const CHECKPOINT_EVERY = 50_000;

/** PostgreSQL reported the error (it has an SQLSTATE): the statement, and its implicit transaction, failed. */
const reportedByDatabase = (error: unknown): boolean =>
  typeof (error as { code?: unknown } | undefined)?.code === 'string' &&
  /^[0-9A-Z]{5}$/.test((error as { code: string }).code);

/** The effects of one batch, collected while the engine runs and written at its end. */
class BatchWork {
  readonly commands: Command[] = [];
  readonly created = new Map<number, OrderRow>();
  readonly changed = new Map<number, OrderDelta>();
  readonly trades: TradeRow[] = [];
  readonly entries: JournalEntry[] = [];
  /** The nonces the batch accepted, per API key. */
  readonly nonces = new Map<number, NonceUse>();
  /** Available funds of the balances the batch checks, by `account:currency`. */
  readonly available = new Map<string, bigint>();

  /** Queues a ledger entry and follows its effect on the checked balances. */
  post(entry: JournalEntry): void {
    this.entries.push(entry);
    for (const leg of entry.legs) {
      if (leg.bucket !== 'available') continue;
      const key = `${leg.accountId}:${leg.currency}`;
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

  finish(id: number, state: OrderRow['state'], time: number): void {
    const target = this.touch(id, time);
    target.state = state;
  }
}

const refuse = (code: OrderRefusal['code'], message: string): OrderRefusal =>
  ({ ok: false, code, message }) as OrderRefusal;

/**
 * The single writer of one market. Requests queue in memory; while a batch is being written the next
 * requests wait and then go together (group commit). A batch is two round trips: one read of the
 * balances and API key nonces it needs and does not know already (see BatchInputs), then, after the
 * engine has applied every request in arrival order (funds checked and locked, fills settled, unused
 * locks released), one self-committing statement that writes the batch's netted ledger entry, its
 * command log row, orders and trades, and checks that what the batch was computed on still holds.
 * Callers hear back only after that statement has committed, so every acknowledged order, cancel and
 * trade is durable. When a batch fails, the engine goes back to its committed state (the failed batch
 * left no trace) and the batch is computed again on fresh values when the failure says that may help
 * (a conflict or deadlock); otherwise its callers get the error. Going back costs a restore of an
 * in-memory checkpoint and a replay of the commands committed since (at most CHECKPOINT_EVERY), not
 * of the whole stored log; only when the write's outcome is unknown (the connection failed while the
 * statement was out) is the engine rebuilt from the stored log, which then holds the batch or not.
 */
export class MarketWriter {
  private engine: MatchingEngine;
  private seq = 0;
  private readonly queue: Pending[] = [];
  private running = false;
  /** The engine holds changes of a batch that rolled back and could not be rebuilt yet. */
  private stale = false;
  /** The engine as of the last checkpoint, and the commands committed since, in order. */
  private checkpoint: { readonly snapshot: EngineSnapshot; readonly seq: number };
  private committedSince: Command[] = [];
  /** The last batch's write failed without an answer from the database: it may have committed. */
  private writeOutcomeUnknown = false;
  /** True while the engine holds changes of a batch not committed yet. */
  private inFlight = false;
  private committedView: BookView = { bids: [], asks: [], lastPrice: null };
  private viewRead = false;
  private idle: Promise<void> = Promise.resolve();
  private markIdle: () => void = () => {};
  /** Committed transactions and the requests they answered (group commit: requests >= batches). */
  readonly stats = { batches: 0, requests: 0 };

  constructor(
    readonly market: TradingMarket,
    private readonly ctx: WriterContext,
  ) {
    this.engine = new MatchingEngine(market.spec);
    this.checkpoint = { snapshot: this.engine.snapshot(), seq: 0 };
  }

  /** The live engine (tests, snapshots). Never apply commands to it directly. */
  get book(): MatchingEngine {
    return this.engine;
  }

  /**
   * The book as last committed: between batches the engine itself, during a batch a copy taken
   * before it began, so public data never shows an order or trade that might still roll back.
   */
  view(): BookView {
    if (this.inFlight || this.stale) {
      this.viewRead = true;
      return this.committedView;
    }
    this.committedView = this.capture();
    return this.committedView;
  }

  private capture(): BookView {
    const depth = this.engine.depth();
    return { bids: depth.bids, asks: depth.asks, lastPrice: this.engine.lastPrice };
  }

  get commandSeq(): number {
    return this.seq;
  }

  /** Rebuilds the engine by replaying the stored command log from an empty book. */
  async rebuild(): Promise<void> {
    const engine = new MatchingEngine(this.market.spec);
    let seq = 0;
    for (;;) {
      const chunk = await commandLog(this.ctx.db, this.market.id, seq, 5_000);
      for (const entry of chunk) {
        const result = engine.apply(entry.command);
        if (!result.ok) {
          throw new Error(
            `market ${this.market.id}: stored command ${entry.seq} is refused on replay (${result.code})`,
          );
        }
        seq = entry.seq;
      }
      // A chunk holds up to 5,000 batches of commands: the log ends at the first empty one.
      if (chunk.length === 0) break;
    }
    this.engine = engine;
    this.seq = seq;
    this.takeCheckpoint();
  }

  private takeCheckpoint(): void {
    this.checkpoint = { snapshot: this.engine.snapshot(), seq: this.seq };
    this.committedSince = [];
  }

  /**
   * Brings the engine back to its committed state without the database: the last checkpoint, then
   * the commands committed since. Replay is deterministic, so this is the engine the stored log
   * would rebuild.
   */
  private rollBack(): void {
    const engine = MatchingEngine.restore(this.market.spec, this.checkpoint.snapshot);
    for (const command of this.committedSince) {
      const result = engine.apply(command);
      if (!result.ok) throw new Error(`market ${this.market.id}: a committed command is refused on replay`);
    }
    this.engine = engine;
    this.seq = this.checkpoint.seq + this.committedSince.length;
  }

  /** Queues a request; a deferred nonce is recorded (or refused as reused) in the request's batch. */
  submit(request: OrderRequest, nonce?: DeferredNonce): Promise<OrderOutcome> {
    return new Promise((resolve, reject) => {
      this.queue.push({ request, nonce, resolve, reject });
      if (!this.running) void this.drain();
    });
  }

  /** Resolves once every queued request has been answered. */
  async drained(): Promise<void> {
    await this.idle;
  }

  private async drain(): Promise<void> {
    this.running = true;
    this.idle = new Promise((resolve) => {
      this.markIdle = resolve;
    });
    try {
      while (this.queue.length > 0) {
        const batch = this.queue.splice(0, MAX_BATCH);
        await this.runBatch(batch);
      }
    } finally {
      this.running = false;
      this.markIdle();
    }
  }

  private async runBatch(batch: Pending[]): Promise<void> {
    if (this.stale) {
      // An earlier failed batch could not rebuild the engine (database unreachable): try again first.
      try {
        await this.rebuild();
        this.stale = false;
      } catch (error) {
        for (const pending of batch) pending.reject(error);
        return;
      }
    }
    // Readers during the batch see the book as it is now, committed (copied only when read lately).
    if (this.viewRead) {
      this.committedView = this.capture();
      this.viewRead = false;
    }
    this.inFlight = true;
    try {
      await this.attempts(batch);
    } finally {
      this.inFlight = false;
    }
  }

  private async attempts(batch: Pending[]): Promise<void> {
    for (let attempt = 1; ; attempt += 1) {
      try {
        const outcomes = await this.ctx.exclusive(() => this.applyBatch(batch));
        this.stats.batches += 1;
        this.stats.requests += batch.length;
        for (const pending of batch) if (pending.nonce) pending.nonce.consumed = true;
        for (const [index, pending] of batch.entries()) pending.resolve(outcomes[index]!);
        return;
      } catch (error) {
        // Bring the engine back to what is stored: without the batch, unless its outcome is unknown.
        try {
          if (this.writeOutcomeUnknown) await this.rebuild();
          else this.rollBack();
        } catch (rebuildError) {
          this.stale = true;
          for (const pending of batch) pending.reject(rebuildError);
          return;
        }
        const code = (error as { code?: string } | undefined)?.code;
        if (!(code && RETRYABLE.has(code)) || attempt >= ATTEMPTS) {
          for (const pending of batch) pending.reject(error);
          return;
        }
      }
    }
  }

  /**
   * One batch in two statements: read what the batch needs and `inputs` does not know (or knows too
   * low to accept a request), run every request through the engine in memory against those values,
   * then write everything in one statement (writeBatch), which refuses itself if the values changed.
   */
  private async applyBatch(batch: readonly Pending[]): Promise<OrderOutcome[]> {
    const inputs = this.ctx.inputs;
    const work = new BatchWork();
    const used = this.inputsOf(batch);
    const toRead = [...used.balances].filter(([key, needed]) => {
      const known = inputs.balance(key);
      return needed.total === 'fresh' || known === undefined || known < needed.total;
    });
    const keysToRead = [...used.keyIds].filter((id) => inputs.key(id)?.status !== 'usable');
    if (toRead.length > 0 || keysToRead.length > 0) {
      const read = await readBatch(
        this.ctx.db,
        toRead.map(([, needed]) => needed),
        keysToRead,
      );
      // A balance never funded has no row: it is zero.
      for (const [key] of toRead) inputs.learnBalance(key, read.available.get(key) ?? 0n);
      for (const [id, nonces] of read.nonces) inputs.learnKey(id, nonces);
    }
    for (const key of used.balances.keys()) work.available.set(key, inputs.balance(key) ?? 0n);
    this.writeOutcomeUnknown = false;
    let sent = false;
    try {
      const results = batch.map(
        (pending) => this.checkNonce(pending.nonce, work) ?? this.applyOne(pending.request, work),
      );
      const lastSeq = this.seq;
      sent = true;
      const written = await writeBatch(this.ctx.db, {
        market: this.market.id,
        commands: work.commands,
        lastSeq,
        entry: netEntry(
          'orders',
          `${this.market.id} commands ${lastSeq - work.commands.length + 1}-${lastSeq}`,
          work.entries,
        ),
        created: [...work.created.values()],
        changed: [...work.changed.values()],
        trades: work.trades,
        nonces: work.nonces,
      });
      this.committedSince.push(...work.commands);
      if (this.committedSince.length >= (this.ctx.checkpointEvery ?? CHECKPOINT_EVERY)) this.takeCheckpoint();
      for (const [key, available] of written.balances) inputs.learnBalance(key, available);
      for (const [id, use] of work.nonces) {
        const known = inputs.key(id);
        if (known) inputs.learnKey(id, { ...known, v2: max(known.v2, use.v2), v3: max(known.v3, use.v3) });
      }
      const rows = new Map(written.orders.map((row) => [row.id, row]));
      for (const row of work.created.values()) rows.set(row.id, row);
      return results.map((result) => {
        if (typeof result !== 'number') return result;
        const order = rows.get(result);
        if (!order) throw new Error(`order ${result} missing after its batch`);
        return { ok: true, order };
      });
    } catch (error) {
      this.writeOutcomeUnknown = sent && !reportedByDatabase(error);
      // What this batch relied on may be out of date: the next attempt reads it again.
      const moved = work.entries.flatMap((entry) =>
        entry.legs.map((l) => balanceKey(l.accountId, l.currency)),
      );
      inputs.forget([...used.balances.keys(), ...moved], used.keyIds);
      throw error;
    }
  }

  /** The balances a batch checks (with the funds its requests need from each) and the keys it uses. */
  private inputsOf(batch: readonly Pending[]): {
    balances: Map<string, { accountId: number; currency: string; total: bigint | 'fresh' }>;
    keyIds: Set<number>;
  } {
    const balances = new Map<string, { accountId: number; currency: string; total: bigint | 'fresh' }>();
    const keyIds = new Set<number>();
    for (const { request, nonce } of batch) {
      if (nonce) keyIds.add(nonce.keyId);
      const currency = this.lockCurrency(request);
      if (!currency) continue;
      const key = balanceKey(request.accountId, currency);
      const needed = fundsNeeded(this.market, request);
      const sum = balances.get(key)?.total ?? 0n;
      const total = needed === 'fresh' || sum === 'fresh' ? 'fresh' : sum + needed;
      balances.set(key, { accountId: request.accountId, currency, total });
    }
    return { balances, keyIds };
  }

  /**
   * Checks and records a request's nonce, in arrival order, as consumeNonce would have; the batch's
   * write makes sure no other request recorded a nonce as large in the meantime.
   */
  private checkNonce(nonce: DeferredNonce | undefined, work: BatchWork): OrderRefusal | undefined {
    if (!nonce) return undefined;
    const known: KeyNonces | undefined = this.ctx.inputs.key(nonce.keyId);
    if (!known) return refuse('NONCE_REUSED', 'the API key of this request no longer exists');
    // Authentication may have used a cached key: its status read with the batch decides.
    if (known.status !== 'usable') return refuse('KEY_DISABLED', `API key is ${known.status}`);
    const value = BigInt(nonce.value);
    const use = work.nonces.get(nonce.keyId) ?? { v2: 0n, v3: 0n, minV2: NO_NONCE, minV3: NO_NONCE };
    const last = nonce.protocol === 'v2' ? max(known.v2, use.v2) : max(known.v3, use.v3);
    if (value <= last) {
      return refuse(
        'NONCE_REUSED',
        `${nonce.protocol === 'v2' ? 'tonce' : 'svc-nonce'} must be greater than the previous one used with this key`,
      );
    }
    if (nonce.protocol === 'v2') {
      use.v2 = value;
      use.minV2 = min(use.minV2, value);
    } else {
      use.v3 = value;
      use.minV3 = min(use.minV3, value);
    }
    work.nonces.set(nonce.keyId, use);
    return undefined;
  }

  /** The currency an order request locks (none for a cancel). */
  private lockCurrency(request: OrderRequest): string | undefined {
    if (request.type === 'cancel') return undefined;
    return request.side === 'buy' ? this.market.quote : this.market.base;
  }

  private applyOne(request: OrderRequest, work: BatchWork): OrderRefusal | number {
    const time = this.ctx.now();
    const account = String(request.accountId);
    if (request.type === 'cancel') {
      const command: Command = { type: 'cancel', id: request.orderId, account, time };
      const result = this.engine.apply(command);
      if (!result.ok) return refuse(result.code, result.message);
      this.record(command, result.events, work);
      return request.orderId;
    }
    const market = this.market;
    const currency = this.lockCurrency(request)!;
    const key = `${request.accountId}:${currency}`;
    const available = work.available.get(key) ?? 0n;
    const id = this.ctx.nextOrderId();
    let command: Command;
    switch (request.type) {
      case 'limit':
        command = {
          type: 'limit',
          id,
          account,
          side: request.side,
          price: request.price,
          amount: request.amount,
          time,
        };
        break;
      case 'limit_stop_loss':
        command = {
          type: 'limit_stop_loss',
          id,
          account,
          side: request.side,
          price: request.price,
          stopPrice: request.stopPrice ?? 0n,
          amount: request.amount,
          time,
        };
        break;
      case 'market':
        if (request.side === 'buy') {
          // A market buy by base may spend what the account has: its available quote is the budget.
          const budget = market.ledgerToQuote(available);
          if (budget <= 0n) return refuse('INSUFFICIENT_FUNDS', `no ${market.quote} available to buy with`);
          command = { type: 'market', id, account, side: 'buy', amount: request.amount, budget, time };
        } else {
          command = { type: 'market', id, account, side: 'sell', amount: request.amount, time };
        }
        break;
      case 'market_by_quote':
        if (request.side === 'sell') {
          const budget = market.ledgerToBase(available);
          if (budget <= 0n) return refuse('INSUFFICIENT_FUNDS', `no ${market.base} available to sell`);
          command = {
            type: 'market_by_quote',
            id,
            account,
            side: 'sell',
            quote: request.quote,
            budget,
            time,
          };
        } else {
          command = { type: 'market_by_quote', id, account, side: 'buy', quote: request.quote, time };
        }
        break;
    }
    const lock = lockFor(this.engine.market, command);
    if ('ok' in lock) return refuse(lock.code, lock.message);
    const needed =
      lock.asset === 'base' ? market.baseToLedger(lock.amount) : market.quoteToLedger(lock.amount);
    if (available < needed) {
      return refuse(
        'INSUFFICIENT_FUNDS',
        `the order needs ${lock.asset === 'base' ? market.formatAmount(lock.amount) : market.formatTotal(lock.amount)} ${currency} locked, more than is available`,
      );
    }
    const result = this.engine.apply(command);
    // lockFor accepted it with a fresh id, so the engine accepts it too.
    if (!result.ok) return refuse(result.code, result.message);
    const entry = lockEntry(market, request.accountId, lock.asset, lock.amount, id, false);
    if (entry) work.post(entry);
    this.record(command, result.events, work);
    return id;
  }

  /** Logs an applied command and settles its events in the ledger. */
  private record(command: Command, events: readonly EngineEvent[], work: BatchWork): void {
    this.seq += 1;
    work.commands.push(command);
    for (const event of events) {
      switch (event.type) {
        case 'accepted':
          work.created.set(event.orderId, {
            id: event.orderId,
            market: this.market.id,
            accountId: Number(event.account),
            side: event.side,
            kind: event.kind,
            price: event.price,
            stopPrice: event.stopPrice,
            amount: event.amount,
            quote: event.quote,
            executed: 0n,
            funds: 0n,
            tradesCount: 0,
            state: 'wait',
            createdAt: event.time,
            updatedAt: event.time,
          });
          break;
        case 'trade': {
          const tradeId = this.ctx.nextTradeId();
          work.post(tradeEntry(this.market, event, tradeId, this.ctx.feeAccountId));
          work.trades.push({
            id: tradeId,
            market: this.market.id,
            price: event.price,
            amount: event.amount,
            quote: event.quote,
            takerSide: event.takerSide,
            buyOrderId: event.buyOrderId,
            sellOrderId: event.sellOrderId,
            buyAccount: Number(event.buyAccount),
            sellAccount: Number(event.sellAccount),
            buyerFee: event.buyerFee,
            sellerFee: event.sellerFee,
            createdAt: event.time,
          });
          work.fill(event.buyOrderId, event.amount, event.quote, event.time);
          work.fill(event.sellOrderId, event.amount, event.quote, event.time);
          break;
        }
        case 'done': {
          const release = releaseEntry(this.market, event);
          if (release) work.post(release);
          work.finish(event.orderId, event.status === 'filled' ? 'done' : 'cancel', event.time);
          break;
        }
        case 'stop_triggered':
          work.touch(event.orderId, event.time);
          break;
      }
    }
  }
}

const max = (a: bigint, b: bigint): bigint => (a > b ? a : b);
const min = (a: bigint, b: bigint): bigint => (a < b ? a : b);
