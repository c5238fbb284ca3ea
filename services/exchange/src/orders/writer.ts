import { type Database, sqlState } from '../db/database.js';
import type { DeferredNonce } from '../http/request-context.js';
import { netEntry } from '../ledger/entry.js';
import { type BookEntry, MatchingEngine } from '../matching/engine.js';
import type { EngineSnapshot } from '../matching/snapshot.js';
import type { Command, EngineEvent } from '../matching/types.js';
import { lockFor } from '../matching/validate.js';
import { type BatchInputs, balanceKey, fundsNeeded } from './batch-inputs.js';
import { BatchWork } from './batch-work.js';
import type { TradingMarket } from './markets.js';
import type { BatchPipeline } from './pipeline.js';
import type { OrderOutcome, OrderRefusal, OrderRequest } from './requests.js';
import { lockEntry, releaseEntry, tradeEntry } from './settlement.js';
import { type BatchWritten, commandLog, type KeyNonces, NO_NONCE, readBatch } from './store.js';

/** What the writers share: storage, the clock, the fee account and the global id sequences. */
export interface WriterContext {
  readonly db: Database;
  readonly now: () => number;
  readonly feeAccountId: number;
  /**
   * Sends the batches of every market, in the order they are computed, on one connection, several
   * at a time, each committing only if the ones before it did (see pipeline.ts). Writers compute one
   * batch at a time (`pipeline.exclusive`): batches of different markets touch the same balances (a
   * maker's funds, an account trading two markets), so each is computed on what the ones before it
   * will leave and `inputs` stays current. The engines stay separate and fast, and each market's
   * queue keeps filling meanwhile, so waiting makes its next batch larger.
   */
  readonly pipeline: BatchPipeline;
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
  /** Times a batch holding this request failed. */
  failedBatches: number;
}

/** The committed state of a market's book, as public market data shows it. */
export interface BookView {
  readonly bids: readonly BookEntry[];
  readonly asks: readonly BookEntry[];
  readonly lastPrice: bigint | null;
}

/** A batch sent and not settled yet. */
interface Flight {
  readonly batch: readonly Pending[];
  /** Per request: the refusal, or the id of the order it placed or cancelled. */
  readonly results: readonly (OrderRefusal | number)[];
  readonly work: BatchWork;
  /** Available funds the batch moves, by balance key (BatchInputs.sent). */
  readonly moves: ReadonlyMap<string, bigint>;
  /** Balances the batch checked and API keys whose nonces it records. */
  readonly checked: readonly string[];
  readonly keyIds: ReadonlySet<number>;
  /** The book as the batch leaves it, when it was read lately: the public view once it commits. */
  readonly view: BookView | undefined;
  /** The engine as the batch leaves it, when a checkpoint is due: the checkpoint once it commits. */
  readonly checkpoint: Checkpoint | undefined;
}

interface Checkpoint {
  readonly snapshot: EngineSnapshot;
  readonly seq: number;
}

/** Largest number of requests committed in one statement. */
const MAX_BATCH = 256;
/**
 * Failures after which a request is computed again: deadlock and serialisation failures, and SVC01
 * (the balances, nonces or earlier batch its batch was computed on changed; see writeBatch).
 */
const RETRYABLE = new Set(['40P01', '40001', 'SVC01']);
const ATTEMPTS = 8;
/** Committed commands between two in-memory checkpoints of the engine (see MarketWriter.rollBack). */
export const CHECKPOINT_EVERY = 50_000;

const refuse = (code: OrderRefusal['code'], message: string): OrderRefusal =>
  ({ ok: false, code, message }) as OrderRefusal;

/**
 * The single writer of one market. Requests queue in memory and go in batches (group commit): a
 * batch is computed in memory (nonces checked, funds checked and locked, fills settled, unused locks
 * released, in arrival order) against the balances and nonces `inputs` remembers (read first when
 * it does not know them, or knows too little), then written by one self-committing statement that
 * checks what it was computed on still holds (writeBatch). Statements go through the pipeline
 * (pipeline.ts), which with a depth of 2 or more lets the next batch be computed and sent while the
 * previous one commits. Callers hear back only after their batch's statement has committed, so every
 * acknowledged order, cancel and trade is durable.
 *
 * When a batch fails, those this writer sent after it fail too (the chain); once all have settled,
 * the engine goes back to its committed state (the failed batches left no trace) and their requests
 * are computed again when the failure says that may help (a conflict or deadlock), otherwise their
 * callers get the error. Going back costs a restore of an in-memory checkpoint and a replay of the
 * commands committed since (at most CHECKPOINT_EVERY), not of the whole stored log; only when a
 * write's outcome is unknown (the connection failed while the statement was out) is the engine
 * rebuilt from the stored log, which then holds the batch or not.
 */
export class MarketWriter {
  private engine: MatchingEngine;
  private seq = 0;
  private readonly queue: Pending[] = [];
  private running = false;
  /** The engine could not be brought back after a failure (database unreachable): rebuild first. */
  private stale = false;
  /** The engine as of the last committed checkpoint, and the commands committed since, in order. */
  private checkpoint: Checkpoint;
  private committedSince: Command[] = [];
  /** Commands computed (committed or in flight) since the last checkpoint taken. */
  private sinceCheckpoint = 0;
  /** Batches of this writer in flight. */
  private flying = 0;
  /** Failed batches waiting for this writer's other batches in flight to settle. */
  private failures: { readonly batch: readonly Pending[]; readonly error: unknown }[] = [];
  /** A failed batch's statement may have committed (no answer from the database). */
  private outcomeUnknown = false;
  /** Wakes the drain loop when a batch settles or a request arrives. */
  private wake: (() => void) | undefined;
  private committedView: BookView = { bids: [], asks: [], lastPrice: null };
  private viewRead = false;
  private idle: Promise<void> = Promise.resolve();
  private markIdle: () => void = () => {};
  /**
   * Committed statements and the requests they answered (group commit: requests >= batches), and
   * statements that failed (a conflict, a failed batch before them in the chain, a database error).
   */
  readonly stats = { batches: 0, requests: 0, failed: 0 };

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
   * The book as last committed: when nothing is in flight the engine itself, otherwise a copy taken
   * before the first batch in flight or as a committed batch left it, so public data never shows an
   * order or trade that might still roll back.
   */
  view(): BookView {
    if (this.flying > 0 || this.failures.length > 0 || this.stale) {
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
    this.checkpoint = { snapshot: this.engine.snapshot(), seq };
    this.committedSince = [];
    this.sinceCheckpoint = 0;
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
    this.sinceCheckpoint = this.committedSince.length;
  }

  /** Queues a request; a deferred nonce is recorded (or refused as reused) in the request's batch. */
  submit(request: OrderRequest, nonce?: DeferredNonce): Promise<OrderOutcome> {
    return new Promise((resolve, reject) => {
      this.queue.push({ request, nonce, resolve, reject, failedBatches: 0 });
      if (!this.running) void this.drain();
      else this.wake?.();
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
      for (;;) {
        if (this.failures.length > 0) {
          if (this.flying === 0) await this.recover();
          else await this.settling();
        } else if (this.queue.length > 0) {
          await this.ctx.pipeline.exclusive(() => this.dispatch());
        } else if (this.flying > 0) {
          await this.settling();
        } else {
          break;
        }
      }
    } finally {
      this.running = false;
      this.markIdle();
    }
  }

  /** Resolves when one of this writer's batches settles or a request arrives. */
  private settling(): Promise<void> {
    return new Promise((resolve) => {
      this.wake = () => {
        this.wake = undefined;
        resolve();
      };
    });
  }

  /**
   * Computes the next batch and sends its statement, in the writers' turn. Reads first what `inputs` does
   * not know (or knows too low to accept a request), once nothing is in flight, so that what is read
   * is not shifted again by a batch still to land.
   */
  private async dispatch(): Promise<void> {
    // Taken now, when there is room to send it, so the batch holds everything that waited meanwhile.
    if (this.failures.length > 0) return;
    const batch = this.queue.splice(0, MAX_BATCH);
    if (batch.length === 0) return;
    const inputs = this.ctx.inputs;
    const pipeline = this.ctx.pipeline;
    let used: ReturnType<MarketWriter['inputsOf']>;
    try {
      if (this.stale) {
        await this.rebuild();
        this.stale = false;
      }
      await pipeline.prepare();
      used = this.inputsOf(batch);
      const toRead = [...used.balances].filter(([key, needed]) => {
        const known = inputs.balance(key);
        return needed.total === 'fresh' || known === undefined || known < needed.total;
      });
      const keysToRead = [...used.keyIds].filter((id) => inputs.key(id)?.status !== 'usable');
      if (toRead.length > 0 || keysToRead.length > 0) {
        await pipeline.quiet();
        const read = await readBatch(
          this.ctx.db,
          toRead.map(([, needed]) => needed),
          keysToRead,
        );
        // A balance never funded has no row: it is zero.
        for (const [key] of toRead) inputs.learnBalance(key, read.available.get(key) ?? 0n);
        for (const [id, nonces] of read.nonces) inputs.learnKey(id, nonces);
        // The chain's value is read again after a failure, which waiting may have seen.
        await pipeline.prepare();
      }
    } catch (error) {
      for (const pending of batch) pending.reject(error);
      return;
    }
    if (this.failures.length > 0) {
      // A batch of this writer failed while this one waited: the engine goes back first.
      this.queue.unshift(...batch);
      return;
    }
    try {
      this.send(batch, used);
    } catch (error) {
      // The engine may hold part of the batch: it goes back as after a failed write.
      this.failures.push({ batch, error });
    }
  }

  /** Runs the batch through the engine and sends its statement (synchronously: the chain's order). */
  private send(batch: readonly Pending[], used: ReturnType<MarketWriter['inputsOf']>): void {
    const inputs = this.ctx.inputs;
    const wanted = this.viewRead;
    this.viewRead = false;
    // Readers during the batch see the book as it is now, committed (copied only when read lately).
    if (wanted && this.flying === 0) this.committedView = this.capture();
    const work = new BatchWork();
    for (const key of used.balances.keys()) work.available.set(key, inputs.balance(key) ?? 0n);
    const results = batch.map(
      (pending) => this.checkNonce(pending.nonce, work) ?? this.applyOne(pending.request, work),
    );
    const lastSeq = this.seq;
    this.sinceCheckpoint += work.commands.length;
    const due = this.sinceCheckpoint >= (this.ctx.checkpointEvery ?? CHECKPOINT_EVERY);
    if (due) this.sinceCheckpoint = 0;
    const flight: Flight = {
      batch,
      results,
      work,
      moves: work.availableMoves(),
      checked: [...used.balances.keys()],
      keyIds: used.keyIds,
      view: wanted ? this.capture() : undefined,
      checkpoint: due ? { snapshot: this.engine.snapshot(), seq: lastSeq } : undefined,
    };
    const written = this.ctx.pipeline.send({
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
    this.flying += 1;
    // What later batches are computed on: the funds and nonces this one will leave.
    inputs.sent(flight.moves);
    for (const [id, use] of work.nonces) {
      const known = inputs.key(id);
      if (known) inputs.learnKey(id, { ...known, v2: max(known.v2, use.v2), v3: max(known.v3, use.v3) });
    }
    written
      .then(
        (stored) => this.landed(flight, stored),
        (error) => this.failed(flight, error),
      )
      // A bug in taking up the outcome must not leave callers waiting (answered ones ignore this).
      .catch((bug: unknown) => {
        for (const pending of flight.batch) pending.reject(bug);
      });
  }

  /** A batch committed: its callers hear back. Batches land in the order they were sent. */
  private landed(flight: Flight, written: BatchWritten): void {
    this.flying -= 1;
    this.stats.batches += 1;
    this.stats.requests += flight.batch.length;
    if (flight.checkpoint) {
      this.checkpoint = flight.checkpoint;
      this.committedSince = [];
    } else {
      this.committedSince.push(...flight.work.commands);
    }
    this.ctx.inputs.committed(flight.moves, written.balances);
    if (flight.view) this.committedView = flight.view;
    const rows = new Map(written.orders.map((row) => [row.id, row]));
    for (const row of flight.work.created.values()) rows.set(row.id, row);
    for (const [index, pending] of flight.batch.entries()) {
      if (pending.nonce) pending.nonce.consumed = true;
      const result = flight.results[index]!;
      if (typeof result !== 'number') {
        pending.resolve(result);
        continue;
      }
      const order = rows.get(result);
      if (order) pending.resolve({ ok: true, order });
      else pending.reject(new Error(`order ${result} missing after its batch`));
    }
    this.wake?.();
  }

  /** A batch failed: recovery waits until this writer's other batches in flight have settled. */
  private failed(flight: Flight, error: unknown): void {
    this.flying -= 1;
    this.stats.failed += 1;
    // Without an SQLSTATE the database may have committed the statement before the connection failed.
    if (sqlState(error) === undefined) this.outcomeUnknown = true;
    this.ctx.inputs.failed(flight.moves, flight.checked, flight.keyIds);
    this.failures.push({ batch: flight.batch, error });
    this.wake?.();
  }

  /**
   * Brings the engine back to what is stored (without the failed batches, unless an outcome is
   * unknown) and queues their requests again in arrival order when the failure may pass, ahead of
   * newer ones; the others are answered with the error.
   */
  private async recover(): Promise<void> {
    const failures = this.failures;
    this.failures = [];
    try {
      if (this.outcomeUnknown) await this.rebuild();
      else this.rollBack();
      this.outcomeUnknown = false;
    } catch (rebuildError) {
      this.stale = true;
      for (const failure of failures) for (const pending of failure.batch) pending.reject(rebuildError);
      return;
    }
    const again: Pending[] = [];
    for (const { batch, error } of failures) {
      const code = sqlState(error);
      for (const pending of batch) {
        pending.failedBatches += 1;
        if (code && RETRYABLE.has(code) && pending.failedBatches < ATTEMPTS) again.push(pending);
        else pending.reject(error);
      }
    }
    this.queue.unshift(...again);
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
