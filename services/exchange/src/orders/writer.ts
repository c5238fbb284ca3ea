import type { Database } from '../db/database.js';
import type { DeferredNonce } from '../http/request-context.js';
import { netEntry } from '../ledger/entry.js';
import { MatchingEngine } from '../matching/engine.js';
import type { Command, EngineEvent } from '../matching/types.js';
import type { BookSnapshots, Restored } from '../snapshots/book-snapshots.js';
import { type ComputeContext, computeBatch } from './batch-compute.js';
import type { BatchFeed } from './batch-feed.js';
import type { BatchInputs } from './batch-inputs.js';
import { BatchWork } from './batch-work.js';
import { type BookView, captureView, EMPTY_VIEW, type LiveOrders } from './book-view.js';
import { CHECKPOINT_EVERY, Checkpoints } from './checkpoints.js';
import type { CommitFeed } from './commits.js';
import { answerLanded, type Flight } from './flight.js';
import { type BatchNeeds, needsOf } from './fund-check.js';
import type { TradingMarket } from './markets.js';
import { max } from './nonce-check.js';
import type { BatchPipeline } from './pipeline.js';
import { MAX_BATCH, type Pending } from './queued.js';
import { type FailedBatch, outcomeUnknown, retryOrReject } from './recovery.js';
import { replayLog } from './replay.js';
import type { OrderOutcome, OrderRequest } from './requests.js';
import { type BatchWritten, loggedAsSent, readBatch } from './store.js';
import { WriterStats } from './writer-stats.js';

export type { BookView } from './book-view.js';

/** One committed batch of the command log, as a node following the market reads it (cluster/follow.ts). */
export interface LoggedRow {
  readonly seq: number;
  readonly commands: readonly Command[];
  /** What the owner published with the batch (a cluster node's rows; undefined in a single process's). */
  readonly feed?: BatchFeed;
}
export { CHECKPOINT_EVERY } from './checkpoints.js';

/** What the writers share: storage, the clock, the fee account and the global id sequences. */
export interface WriterContext extends ComputeContext {
  readonly db: Database;
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
  /** Committed commands between in-memory checkpoints of each engine; CHECKPOINT_EVERY by default. */
  readonly checkpointEvery?: number;
  /** Followers of committed batches (market statistics, the live feed); none when absent. */
  readonly commits?: CommitFeed;
  /** Durable snapshots of the engines: restored from at start-up, given each committed checkpoint. */
  readonly snapshots?: BookSnapshots;
  /** A cluster node's id (src/cluster/): the writer then writes only while it holds the market's lease. */
  readonly clusterNode?: string;
}

/** This node's lease of a market in a cluster (src/cluster/leases.ts), as the writer uses it. */
export interface WriterLease {
  readonly epoch: number;
  /** The market's id slot: its order and trade ids are congruent to it modulo ID_STRIDE. */
  readonly slot: number;
  lastOrderId: number;
  lastTradeId: number;
}

/** Markets' ids interleave in a cluster: market `slot` takes the ids congruent to `slot` modulo this. */
export const ID_STRIDE = 1024;

/** The next id after `last` in `slot`. */
export function nextIdInSlot(last: number, slot: number): number {
  const id = last - (last % ID_STRIDE) + slot;
  return id > last ? id : id + ID_STRIDE;
}

/** A request reached the writer of a market this node does not own (a cluster node lost its lease). */
export class NotOwnerError extends Error {
  constructor(market: string) {
    super(`market ${market} is not written by this node`);
    this.name = 'NotOwnerError';
  }
}

/**
 * The single writer of one market. Requests queue in memory and go in batches (group commit): a
 * batch is computed in memory (batch-compute.ts: nonces checked, funds checked and locked, fills
 * settled, unused locks released, in arrival order) against the balances and nonces `inputs`
 * remembers (read first when it does not know them, or knows too little), then written by one
 * self-committing statement that checks what it was computed on still holds (writeBatch). Statements
 * go through the pipeline (pipeline.ts), which with a depth of 2 or more lets the next batch be
 * computed and sent while the previous one commits. Callers hear back only after their batch's
 * statement has committed, so every acknowledged order, cancel and trade is durable.
 *
 * When a batch fails, those this writer sent after it fail too (the chain); once all have settled,
 * the engine goes back to its committed state (the failed batches left no trace) and their requests
 * are computed again when the failure says that may help (recovery.ts), otherwise their callers get
 * the error. Going back costs a restore of an in-memory checkpoint and a replay of the commands
 * committed since (checkpoints.ts), not of the whole stored log; only when a write's outcome is
 * unknown (the connection failed while the statement was out) is the engine rebuilt from the stored
 * log, which then holds the batch or not.
 */
export class MarketWriter {
  private engine: MatchingEngine;
  private seq = 0;
  private readonly queue: Pending[] = [];
  private running = false;
  /** The engine could not be brought back after a failure (database unreachable): rebuild first. */
  private stale = false;
  private readonly checkpoints: Checkpoints;
  /** Batches of this writer in flight. */
  private flying = 0;
  /** Failed batches waiting for this writer's other batches in flight to settle. */
  private failures: FailedBatch[] = [];
  /** A failed batch's statement may have committed (no answer from the database). */
  private outcomeUnknown = false;
  /** Wakes the drain loop when a batch settles or a request arrives. */
  private wake: (() => void) | undefined;
  /** The committed book at `committedViewSeq`, kept so that readers during batches need not rebuild it. */
  private committedView: BookView = EMPTY_VIEW;
  private committedViewSeq = -1;
  private viewRead = false;
  /** Follow and takeover steps, one at a time: each may rebuild the engine across its awaits. */
  private catchingUp: Promise<void> = Promise.resolve();
  /** Sequence number of the newest durable snapshot offered or restored from (0: none). */
  private snapshotSeq = 0;
  private idle: Promise<void> = Promise.resolve();
  private markIdle: () => void = () => {};
  /** Batches, their sizes, commit latency and compute time, for the metrics. */
  readonly stats = new WriterStats();
  /** In a cluster: this node's lease of the market; undefined while it only follows the market. */
  private lease: WriterLease | undefined;
  /** A planned handover: new requests go elsewhere while the queued ones are written. */
  private handingOver = false;

  constructor(
    readonly market: TradingMarket,
    private readonly ctx: WriterContext,
  ) {
    this.engine = new MatchingEngine(market.spec);
    this.engine.followLevels();
    this.checkpoints = new Checkpoints(market.spec, ctx.checkpointEvery ?? CHECKPOINT_EVERY, this.engine, 0);
  }

  /** The live engine (tests, snapshots). Never apply commands to it directly. */
  get book(): MatchingEngine {
    return this.engine;
  }

  /**
   * The book as last committed (at `committedSeq`, as the followers of committed batches last heard
   * it): when nothing is in flight the engine itself; otherwise a copy taken before the first batch in
   * flight or as a committed batch left it, or, when none is that recent, the committed engine built
   * from the in-memory checkpoint. Public data never shows an order or trade that might still roll
   * back, and a follower starting from this view (market data, the feed) misses no level.
   */
  view(): BookView {
    if (this.flying === 0 && this.failures.length === 0 && !this.stale) {
      this.keepView(captureView(this.engine), this.seq);
      return this.committedView;
    }
    this.viewRead = true;
    const seq = this.checkpoints.committedSeq;
    if (this.committedViewSeq !== seq) this.keepView(captureView(this.checkpoints.committedEngine()), seq);
    return this.committedView;
  }

  /** The live orders of the book `view()` shows, in priority order (the feed's order-by-order book). */
  committedLive(): LiveOrders {
    if (this.flying === 0 && this.failures.length === 0 && !this.stale) return this.engine.liveOrders();
    return this.checkpoints.committedEngine().liveOrders();
  }

  private keepView(view: BookView, seq: number): void {
    this.committedView = view;
    this.committedViewSeq = seq;
  }

  /** The sequence number of the last command computed here (committed, or in flight on an owner). */
  get commandSeq(): number {
    return this.seq;
  }

  /** The sequence number of the committed state `view()` shows and the followers last heard of. */
  get committedSeq(): number {
    return this.checkpoints.committedSeq;
  }

  /** Whether requests may be queued here: always outside a cluster, with the market's lease in one. */
  get owned(): boolean {
    return this.ctx.clusterNode === undefined || (this.lease !== undefined && !this.handingOver);
  }

  /** Whether queued requests may be written (the lease is held, or there is no cluster). */
  private get writable(): boolean {
    return this.ctx.clusterNode === undefined || this.lease !== undefined;
  }

  /**
   * A planned handover (cluster): takes no new request, writes the queued ones, then leaves the
   * lease (returns its epoch, which the caller gives up in the database).
   */
  async handOver(): Promise<number | undefined> {
    this.handingOver = true;
    await this.drained();
    const epoch = this.lease?.epoch;
    this.release();
    return epoch;
  }

  /** The epoch of this node's lease of the market, when it holds it. */
  get epoch(): number | undefined {
    return this.lease?.epoch;
  }

  /** Whether nothing is queued, computing or in flight. */
  get idleNow(): boolean {
    return !this.running && this.flying === 0 && this.failures.length === 0 && this.queue.length === 0;
  }

  /**
   * A follower's step (cluster): applies the committed batches logged after this copy, in order,
   * and publishes them to the followers of committed batches, with the log's sequence numbers.
   * Only while the market is not written here (the engine is then the committed state).
   */
  follow(log: readonly LoggedRow[]): Promise<void> {
    return this.catchUp(async () => {
      if (this.lease || !this.idleNow) return;
      await this.unstale();
      this.applyLogged(log);
    });
  }

  /** Runs `step` after the follow or takeover steps before it (a rebuild in one must not overlap another). */
  private catchUp(step: () => Promise<void>): Promise<void> {
    const run = this.catchingUp.then(step);
    this.catchingUp = run.catch(() => {});
    return run;
  }

  /**
   * A batch's outcome was unknown when the database went away: the engine is rebuilt first, and its
   * followers get the whole rebuilt book (the batches it skipped changed levels they never heard of).
   */
  private async unstale(): Promise<void> {
    if (!this.stale) return;
    await this.rebuild();
    this.stale = false;
    this.publishRebuilt();
  }

  /** Applies the logged batches that continue this copy, in order, publishing each (see `follow`). */
  private applyLogged(log: readonly LoggedRow[]): void {
    for (const row of log) {
      if (row.seq <= this.seq) continue;
      const first = row.seq - row.commands.length + 1;
      if (first !== this.seq + 1) break;
      const followed = this.ctx.commits?.followed === true;
      const events: EngineEvent[] = [];
      for (const command of row.commands) {
        const result = this.engine.apply(command);
        if (!result.ok)
          throw new Error(`market ${this.market.id}: logged command refused on follow (${result.code})`);
        if (followed) for (const event of result.events) events.push(event);
      }
      this.seq = row.seq;
      this.checkpoints.committed(
        row.commands,
        this.checkpoints.taken(this.engine, row.commands.length, row.seq),
      );
      const levels = this.engine.takeChangedLevels();
      if (this.ctx.commits?.followed) {
        // What the owner published with the batch, as it logged it (none in a single process's rows,
        // nor while no node followed the market).
        const feed = row.feed;
        this.ctx.commits.publish({
          market: this.market,
          seq: row.seq,
          prevSeq: first - 1,
          trades: feed?.trades ?? [],
          orders: feed?.orders ?? [],
          balances: feed?.balances ?? new Map(),
          levels,
          events,
          lastPrice: this.engine.lastPrice,
          ...(feed ? {} : { feedMissing: true as const }),
        });
      }
    }
  }

  /**
   * Takes the market over (cluster): `tailAfter(seq)` reads the batches committed after this copy's
   * `seq`, after the lease was taken (so nothing can be committed after them by the node before), and
   * is read once the copy is current (rebuilt first when stale: its sequence number then counted
   * batches that never committed). Requests are taken from then on. Returns the batches applied;
   * throws when the tail does not continue the copy (the lease is then not used).
   */
  async takeOver(
    lease: WriterLease,
    tailAfter: (seq: number) => Promise<readonly LoggedRow[]>,
  ): Promise<number> {
    await this.drained();
    let applied = 0;
    await this.catchUp(async () => {
      await this.unstale();
      const tail = await tailAfter(this.seq);
      this.applyLogged(tail);
      const last = tail[tail.length - 1];
      if (last && last.seq !== this.seq)
        throw new Error(
          `market ${this.market.id}: the logged tail does not continue this copy (at ${this.seq})`,
        );
      applied = tail.length;
      this.checkpoints.reset(this.engine, this.seq);
      this.lease = lease;
    });
    return applied;
  }

  /** The lease is lost (cluster): queued requests are refused; batches in flight are fenced out. */
  release(): void {
    const market = this.market.id;
    this.lease = undefined;
    this.handingOver = false;
    for (const pending of this.queue.splice(0)) pending.reject(new NotOwnerError(market));
  }

  /**
   * Rebuilds the engine from storage: the newest valid durable snapshot and the commands logged
   * after it, or the whole command log from an empty book.
   */
  async rebuild(): Promise<void> {
    const { engine, seq, from }: Restored = this.ctx.snapshots
      ? await this.ctx.snapshots.restore(this.market)
      : await replayLog(this.ctx.db, this.market);
    engine.followLevels();
    this.engine = engine;
    this.seq = seq;
    this.checkpoints.reset(engine, seq, from);
    this.snapshotSeq = from?.checkpoint.seq ?? 0;
  }

  /**
   * Offers a durable snapshot of the engine as it stands when commands were committed since the last
   * one and the writer is idle (nothing queued, in flight or failed: the engine is then the committed
   * state, on a batch boundary). The snapshot timer and graceful shutdown call this; returns whether
   * one was offered.
   */
  offerSnapshot(): boolean {
    const snapshots = this.ctx.snapshots;
    // In a cluster only the writer of a market stores its snapshots.
    if (this.ctx.clusterNode !== undefined && !this.lease) return false;
    if (!snapshots || this.running || this.flying > 0 || this.failures.length > 0 || this.stale) return false;
    if (this.queue.length > 0 || this.seq <= this.snapshotSeq) return false;
    const checkpoint = { snapshot: this.engine.snapshot(), seq: this.seq };
    this.checkpoints.adopt(checkpoint);
    this.snapshotSeq = checkpoint.seq;
    snapshots.offer(this.market.id, checkpoint);
    return true;
  }

  /** Queues a request; a deferred nonce is recorded (or refused as reused) in the request's batch. */
  submit(request: OrderRequest, nonce?: DeferredNonce): Promise<OrderOutcome> {
    if (!this.owned) return Promise.reject(new NotOwnerError(this.market.id));
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
    if (!this.writable) {
      for (const pending of batch) pending.reject(new NotOwnerError(this.market.id));
      return;
    }
    const inputs = this.ctx.inputs;
    const pipeline = this.ctx.pipeline;
    let needs: BatchNeeds;
    try {
      if (this.stale) {
        await this.rebuild();
        this.stale = false;
        this.publishRebuilt();
      }
      await pipeline.prepare();
      needs = needsOf(this.market, batch);
      const toRead = [...needs.balances].filter(([key, needed]) => {
        const known = inputs.balance(key);
        return needed.total === 'fresh' || known === undefined || known < needed.total;
      });
      const keysToRead = [...needs.keyIds].filter((id) => inputs.key(id)?.status !== 'usable');
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
      this.send(batch, needs);
    } catch (error) {
      // The engine may hold part of the batch: it goes back as after a failed write.
      this.failures.push({ batch, error, seq: 0, prevSeq: 0, trades: [], commands: [] });
    }
  }

  /** Runs the batch through the engine and sends its statement (synchronously: the chain's order). */
  private send(batch: readonly Pending[], needs: BatchNeeds): void {
    const inputs = this.ctx.inputs;
    const wanted = this.viewRead;
    this.viewRead = false;
    // Readers during the batch see the book as it is now, committed (copied only when read lately).
    if (wanted && this.flying === 0 && this.failures.length === 0)
      this.keepView(captureView(this.engine), this.seq);
    const work = new BatchWork();
    for (const key of needs.balances.keys()) work.available.set(key, inputs.balance(key) ?? 0n);
    const lease = this.lease;
    const computeStart = performance.now();
    const results = computeBatch(
      lease
        ? {
            ...this.ctx,
            nextOrderId: () => {
              lease.lastOrderId = nextIdInSlot(lease.lastOrderId, lease.slot);
              return lease.lastOrderId;
            },
            nextTradeId: () => {
              lease.lastTradeId = nextIdInSlot(lease.lastTradeId, lease.slot);
              return lease.lastTradeId;
            },
          }
        : this.ctx,
      this.market,
      this.engine,
      batch,
      work,
    );
    const sentAt = performance.now();
    this.stats.computed(batch.length, (sentAt - computeStart) / 1000);
    this.seq += work.commands.length;
    const lastSeq = this.seq;
    // Taken whether followed or not, so that the engine's record of changed levels stays one batch's.
    const levels = this.engine.takeChangedLevels();
    const flight: Flight = {
      batch,
      results,
      work,
      moves: work.availableMoves(),
      checked: [...needs.balances.keys()],
      keyIds: needs.keyIds,
      view: wanted ? captureView(this.engine) : undefined,
      levels: this.ctx.commits?.followed ? levels : undefined,
      lastPrice: this.engine.lastPrice,
      seq: lastSeq,
      checkpoint: this.checkpoints.taken(this.engine, work.commands.length, lastSeq),
      sentAt,
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
      ...(work.clientOrders.length > 0 ? { clientOrders: work.clientOrders } : {}),
      ...(work.orderKeys.size > 0 ? { orderKeys: work.orderKeys } : {}),
      ...(this.ctx.clusterNode !== undefined && lease
        ? {
            fence: {
              node: this.ctx.clusterNode,
              epoch: lease.epoch,
              lastOrderId: lease.lastOrderId,
              lastTradeId: lease.lastTradeId,
            },
          }
        : {}),
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

  /** A batch committed: its callers hear back, then its followers. Batches land in the order they were sent. */
  private landed(flight: Flight, written: BatchWritten): void {
    this.flying -= 1;
    this.stats.committed(flight.batch.length, (performance.now() - flight.sentAt) / 1000);
    this.checkpoints.committed(flight.work.commands, flight.checkpoint);
    if (flight.checkpoint && this.ctx.snapshots) {
      this.ctx.snapshots.offer(this.market.id, flight.checkpoint);
      this.snapshotSeq = flight.checkpoint.seq;
    }
    this.ctx.inputs.committed(flight.moves, written.balances);
    if (flight.view) this.keepView(flight.view, flight.seq);
    const rows = answerLanded(flight, written);
    if (flight.levels && this.ctx.commits?.followed) {
      this.ctx.commits.publish({
        market: this.market,
        seq: flight.seq,
        prevSeq: flight.seq - flight.work.commands.length,
        trades: flight.work.trades,
        orders: [...rows.values()],
        balances: written.balances,
        levels: flight.levels,
        events: flight.work.events,
        lastPrice: flight.lastPrice,
      });
    }
    this.wake?.();
  }

  /**
   * After a rebuild, the engine is the committed state: it becomes the committed view, and the
   * followers of committed batches (market data, the feed) get the whole book as rebuilt with each
   * of `batches`, since the batches the rebuild took in never reached them as levels.
   */
  private publishWholeBook(batches: readonly Pick<FailedBatch, 'seq' | 'prevSeq' | 'trades'>[]): void {
    const book = captureView(this.engine);
    this.keepView(book, this.seq);
    const commits = this.ctx.commits;
    if (!commits?.followed) return;
    const live = this.engine.liveOrders();
    for (const batch of batches) {
      commits.publish({
        market: this.market,
        seq: batch.seq,
        prevSeq: batch.prevSeq,
        trades: batch.trades,
        orders: [],
        balances: new Map(),
        levels: { bids: [], asks: [] },
        events: [],
        lastPrice: book.lastPrice,
        book,
        live,
        recovered: true,
      });
    }
  }

  /**
   * After a rebuild of a stale engine (an unknown outcome the database could not settle at once):
   * the batches committed meanwhile (by this node or, in a cluster, another) are not known one by
   * one, so the feed chains this whole-book change from the last batch it published (feed/hub.ts).
   */
  private publishRebuilt(): void {
    this.publishWholeBook([{ seq: this.seq, prevSeq: this.seq, trades: [] }]);
  }

  /**
   * After a rebuild for an unknown outcome: the failed batches the log holds as sent did commit, so
   * their followers hear of them now (the book as rebuilt, their trades) instead of never. Not every
   * batch at or below the rebuilt sequence number: in a cluster, a node that took the market over
   * meanwhile logs its own batches under the numbers of those that failed here.
   */
  private async publishRecovered(failures: readonly FailedBatch[]): Promise<void> {
    const sent = failures.filter((failure) => failure.seq !== 0 && failure.seq <= this.seq);
    const logged = await loggedAsSent(this.ctx.db, this.market.id, sent);
    const batches: Pick<FailedBatch, 'seq' | 'prevSeq' | 'trades'>[] = sent.filter((failure) =>
      logged.has(failure.seq),
    );
    // The rebuild may hold more than they (another owner's batches after them, or instead of them):
    // the whole book at the rebuilt sequence number closes the chain.
    const last = batches[batches.length - 1];
    if (!last || last.seq < this.seq)
      batches.push({ seq: this.seq, prevSeq: last?.seq ?? this.seq, trades: [] });
    this.publishWholeBook(batches);
  }

  /** A batch failed: recovery waits until this writer's other batches in flight have settled. */
  private failed(flight: Flight, error: unknown): void {
    this.flying -= 1;
    this.stats.failed += 1;
    if (outcomeUnknown(error)) this.outcomeUnknown = true;
    this.ctx.inputs.failed(flight.moves, flight.checked, flight.keyIds);
    this.failures.push({
      batch: flight.batch,
      error,
      seq: flight.seq,
      prevSeq: flight.seq - flight.work.commands.length,
      trades: flight.work.trades,
      commands: flight.work.commands,
    });
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
      if (this.outcomeUnknown) {
        await this.rebuild();
        await this.publishRecovered(failures);
      } else {
        const { engine, seq } = this.checkpoints.rollBack();
        engine.followLevels();
        this.engine = engine;
        this.seq = seq;
      }
      this.outcomeUnknown = false;
    } catch (rebuildError) {
      this.stale = true;
      for (const failure of failures) for (const pending of failure.batch) pending.reject(rebuildError);
      return;
    }
    this.queue.unshift(...retryOrReject(failures));
  }
}
