import type { Database, Sql } from '../db/database.js';
import type { DeferredNonce } from '../http/request-context.js';
import type { JournalEntry } from '../ledger/entry.js';
import { postBatchWithin } from '../ledger/store.js';
import { type BookEntry, MatchingEngine } from '../matching/engine.js';
import type { Command, EngineEvent } from '../matching/types.js';
import { lockFor } from '../matching/validate.js';
import type { TradingMarket } from './markets.js';
import type { OrderOutcome, OrderRefusal, OrderRequest } from './requests.js';
import { lockEntry, releaseEntry, tradeEntry } from './settlement.js';
import { commandLog, lockBatch, type OrderDelta, type OrderRow, type TradeRow, writeBatch } from './store.js';

/** What the writers share: storage, the clock, the fee account and the global id sequences. */
export interface WriterContext {
  readonly db: Database;
  readonly now: () => number;
  readonly feeAccountId: number;
  /**
   * Runs order transactions one at a time across markets. Batches of different markets touch the
   * same balances (a maker's funds, an account trading two markets) in orders nobody can know in
   * advance; run concurrently they deadlock, and PostgreSQL breaks each deadlock only after
   * `deadlock_timeout` (1 s). The engines stay separate and fast; the commits take turns, and each
   * market's queue keeps filling meanwhile, so waiting makes its next batch larger.
   */
  exclusive<T>(fn: () => Promise<T>): Promise<T>;
  nextOrderId(): number;
  nextTradeId(): number;
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

/** Largest number of requests committed in one transaction. */
const MAX_BATCH = 256;
const RETRYABLE = new Set(['40P01', '40001']);

/** The effects of one batch, collected while the engine runs and written at its end. */
class BatchWork {
  readonly commands: { seq: number; command: Command }[] = [];
  readonly created = new Map<number, OrderRow>();
  readonly changed = new Map<number, OrderDelta>();
  readonly trades: TradeRow[] = [];
  readonly entries: JournalEntry[] = [];
  /** Last nonces of the API keys whose requests this batch recorded. */
  readonly nonces = new Map<number, { v2: bigint; v3: bigint }>();
  /** Available funds of the balances the batch checks, by `account:currency`. */
  available = new Map<string, bigint>();

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
 * The single writer of one market. Requests queue in memory; while a batch is being committed the
 * next requests wait and then go together in one transaction (group commit). For each request, in
 * arrival order: funds are checked and locked in the ledger (row-locked, so nothing else spends them
 * meanwhile), the engine applies the command, every fill is settled and every finished order's
 * unused lock released; the batch then writes the command log, orders and trades and commits. Callers
 * hear back only after the commit, so every acknowledged order, cancel and trade is durable. When a
 * batch fails, the engine is rebuilt from the stored command log (the failed batch left no trace) and
 * the batch is retried when the failure was a deadlock, otherwise its callers get the error.
 */
export class MarketWriter {
  private engine: MatchingEngine;
  private seq = 0;
  private readonly queue: Pending[] = [];
  private running = false;
  /** The engine holds changes of a batch that rolled back and could not be rebuilt yet. */
  private stale = false;
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
      if (chunk.length < 5_000) break;
    }
    this.engine = engine;
    this.seq = seq;
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
        const outcomes = await this.ctx.exclusive(() =>
          this.ctx.db.transaction((tx) => this.applyBatch(tx, batch)),
        );
        this.stats.batches += 1;
        this.stats.requests += batch.length;
        for (const pending of batch) if (pending.nonce) pending.nonce.consumed = true;
        for (const [index, pending] of batch.entries()) pending.resolve(outcomes[index]!);
        return;
      } catch (error) {
        // The transaction rolled back: bring the engine back to what is stored.
        try {
          await this.rebuild();
        } catch (rebuildError) {
          this.stale = true;
          for (const pending of batch) pending.reject(rebuildError);
          return;
        }
        const code = (error as { code?: string } | undefined)?.code;
        if (!(code && RETRYABLE.has(code)) || attempt >= 5) {
          for (const pending of batch) pending.reject(error);
          return;
        }
      }
    }
  }

  /**
   * One batch in a constant number of statements: lock the balances the orders draw on (sorted, one
   * statement), run every request through the engine in memory against those balances, then post
   * all ledger entries (one statement) and write log, orders and trades (one statement).
   */
  private async applyBatch(tx: Sql, batch: readonly Pending[]): Promise<OrderOutcome[]> {
    const work = new BatchWork();
    const keys = new Map<string, { accountId: number; currency: string }>();
    for (const { request } of batch) {
      const currency = this.lockCurrency(request);
      if (currency) keys.set(`${request.accountId}:${currency}`, { accountId: request.accountId, currency });
    }
    const keyIds = [...new Set(batch.flatMap((p) => (p.nonce ? [p.nonce.keyId] : [])))];
    const { available, nonces } = await lockBatch(tx, [...keys.values()], keyIds);
    // Balances the batch checks, kept current as its entries move funds (0 when never funded).
    for (const key of keys.keys()) if (!available.has(key)) available.set(key, 0n);
    work.available = available;
    const results = batch.map((pending) => {
      const nonce = pending.nonce;
      if (nonce) {
        // The nonce is checked and recorded here, in arrival order, as consumeNonce would have.
        const last = nonces.get(nonce.keyId);
        if (!last) return refuse('NONCE_REUSED', 'the API key of this request no longer exists');
        const column = nonce.protocol === 'v2' ? 'v2' : 'v3';
        if (BigInt(nonce.value) <= last[column]) {
          return refuse(
            'NONCE_REUSED',
            `${nonce.protocol === 'v2' ? 'tonce' : 'svc-nonce'} must be greater than the previous one used with this key`,
          );
        }
        last[column] = BigInt(nonce.value);
        work.nonces.set(nonce.keyId, last);
      }
      return this.applyOne(pending.request, work);
    });
    await postBatchWithin(tx, work.entries);
    const updated = await writeBatch(
      tx,
      this.market.id,
      work.commands,
      [...work.created.values()],
      [...work.changed.values()],
      work.trades,
      work.nonces,
    );
    const rows = new Map(updated.map((row) => [row.id, row]));
    for (const row of work.created.values()) rows.set(row.id, row);
    return results.map((result) => {
      if (typeof result !== 'number') return result;
      const order = rows.get(result);
      if (!order) throw new Error(`order ${result} missing after its batch`);
      return { ok: true, order };
    });
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
    work.commands.push({ seq: this.seq, command });
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
