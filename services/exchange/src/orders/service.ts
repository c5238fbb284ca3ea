import { systemAccountId } from '../accounts/store.js';
import { type Database, sqlState } from '../db/database.js';
import { ApiError } from '../errors.js';
import type { DeferredNonce } from '../http/request-context.js';
import type { ReferenceData } from '../reference/load.js';
import { BookSnapshots, type SnapshotEvent, type SnapshotSettings } from '../snapshots/book-snapshots.js';
import { BatchInputs } from './batch-inputs.js';
import { CommitFeed } from './commits.js';
import { DEFAULT_FEES, type FeeRates, type TradingMarket, tradingMarkets } from './markets.js';
import { BatchPipeline } from './pipeline.js';
import type { OrderOutcome, OrderRequest } from './requests.js';
import { lastIds, orderById } from './store.js';
import { ID_STRIDE, MarketWriter, NotOwnerError } from './writer.js';

export interface OrderServiceOptions {
  readonly db: Database;
  readonly reference: ReferenceData;
  readonly now: () => number;
  /** @default DEFAULT_FEES (maker 0.1 %, taker 0.2 %) */
  readonly fees?: FeeRates;
  /** @default CHECKPOINT_EVERY (50,000): committed commands between in-memory engine checkpoints. */
  readonly checkpointEvery?: number;
  /** @default PIPELINE_DEPTH (1): batch statements in flight at once (1: each waits for the one before). */
  readonly pipelineDepth?: number;
  /** Followers of committed batches (see commits.ts); a new feed without followers by default. */
  readonly commits?: CommitFeed;
  /**
   * Durable book snapshots (src/snapshots/): with `every` > 0 the engines are restored from them at
   * start-up and snapshotted every `every` committed commands (also the in-memory checkpoint
   * interval); with 0 none are written or read. `report` hears what they did (and how long each
   * book took to rebuild). @default none: every book is replayed from its whole log, unreported
   */
  readonly snapshots?: SnapshotSettings & { readonly report?: (event: SnapshotEvent) => void };
  /**
   * This node's id in a cluster (src/cluster/): every market starts followed, not written, until the
   * cluster gives this node its lease (MarketWriter.takeOver). @default none: one process, every market written here
   */
  readonly clusterNode?: string;
}

/** Where a cluster node sends a request for a market it does not write (src/cluster/forward.ts). */
export type RemoteEntry = (
  writer: MarketWriter,
  request: OrderRequest,
  nonce?: DeferredNonce,
) => Promise<OrderOutcome>;

/** A request met a market without a writer (a cluster between owners): 503 `unavailable`. */
export function unavailable(market: string): ApiError {
  return new ApiError('unavailable', `market ${market} is changing hands; try again shortly`);
}

/**
 * Order entry over every market: one `MarketWriter` (single writer, group commit) per market, the
 * global order and trade id sequences, and the routing of cancels to the market of the order.
 */
export class OrderService {
  private closed = false;
  /** The snapshot timer (BookSnapshots settings.intervalMs), when running. */
  private snapshotTimer: NodeJS.Timeout | undefined;
  /** In a cluster: where requests for markets written by another node go. */
  remote: RemoteEntry | undefined;

  private constructor(
    readonly markets: ReadonlyMap<string, TradingMarket>,
    /** Followers of committed batches: subscribe here (market statistics, the live feed). */
    readonly commits: CommitFeed,
    private readonly writers: ReadonlyMap<string, MarketWriter>,
    private readonly db: Database,
    private readonly pipeline: BatchPipeline,
    /** Durable book snapshots, when enabled. */
    readonly snapshots: BookSnapshots | undefined,
  ) {}

  /**
   * Opens the service: ids continue after the stored ones and every book is rebuilt from storage
   * (its newest valid snapshot and the commands after it, or its whole command log).
   */
  static async start(options: OrderServiceOptions): Promise<OrderService> {
    // A cluster's markets interleave their order ids (writer.ts): their engines page ids by that step.
    const idStride = options.clusterNode !== undefined ? ID_STRIDE : 1;
    const markets = tradingMarkets(options.reference, options.fees ?? DEFAULT_FEES, idStride);
    const ids = await lastIds(options.db);
    let orderId = ids.order;
    let tradeId = ids.trade;
    const pipeline = new BatchPipeline(options.db, options.pipelineDepth, options.clusterNode);
    const commits = options.commits ?? new CommitFeed();
    const snapshots = options.snapshots
      ? new BookSnapshots(options.db, options.snapshots, options.snapshots.report)
      : undefined;
    const checkpointEvery = snapshots?.settings.every || options.checkpointEvery;
    const context = {
      pipeline,
      db: options.db,
      inputs: new BatchInputs(),
      ...(checkpointEvery ? { checkpointEvery } : {}),
      ...(snapshots ? { snapshots } : {}),
      commits,
      ...(options.clusterNode !== undefined ? { clusterNode: options.clusterNode } : {}),
      now: options.now,
      feeAccountId: await systemAccountId(options.db, 'fees'),
      nextOrderId: () => {
        orderId += 1;
        return orderId;
      },
      nextTradeId: () => {
        tradeId += 1;
        return tradeId;
      },
    };
    const writers = new Map<string, MarketWriter>();
    try {
      for (const market of markets.values()) {
        const writer = new MarketWriter(market, context);
        await writer.rebuild();
        writers.set(market.id, writer);
      }
    } catch (error) {
      await pipeline.close();
      throw error;
    }
    const service = new OrderService(markets, commits, writers, options.db, pipeline, snapshots);
    const intervalMs = snapshots?.settings.intervalMs ?? 0;
    if (snapshots && snapshots.settings.every > 0 && intervalMs > 0) {
      // A quiet market otherwise keeps up to `every` commands to replay at the next start.
      service.snapshotTimer = setInterval(() => service.offerSnapshots(), intervalMs);
      service.snapshotTimer.unref();
    }
    return service;
  }

  /** Offers a durable snapshot of every idle market with commands since its last (MarketWriter.offerSnapshot). */
  offerSnapshots(): void {
    if (!this.snapshots || this.snapshots.settings.every === 0) return;
    for (const writer of this.writers.values()) writer.offerSnapshot();
  }

  market(id: string): TradingMarket | undefined {
    return this.markets.get(id.toLowerCase());
  }

  writer(market: string): MarketWriter | undefined {
    return this.writers.get(market.toLowerCase());
  }

  /** Places an order; resolves once it (and its trades) are committed, or with the refusal. */
  async place(market: string, request: OrderRequest, nonce?: DeferredNonce): Promise<OrderOutcome> {
    const writer = this.writer(market);
    if (!writer) throw new Error(`unknown market ${market}`);
    if (this.closed) throw new Error('the order service is closed');
    return this.submit(writer, request, nonce);
  }

  /** Queues a request at the market's writer here, or sends it where the market is written (cluster). */
  private async submit(
    writer: MarketWriter,
    request: OrderRequest,
    nonce?: DeferredNonce,
  ): Promise<OrderOutcome> {
    const market = writer.market.id;
    if (!writer.owned) {
      if (!this.remote) throw unavailable(market);
      return this.remote(writer, request, nonce);
    }
    return this.submitHere(writer, request, nonce);
  }

  /** Queues a request at the market's writer here (a cluster's own markets: 503 when the lease is gone). */
  async submitHere(
    writer: MarketWriter,
    request: OrderRequest,
    nonce?: DeferredNonce,
  ): Promise<OrderOutcome> {
    const market = writer.market.id;
    try {
      return await writer.submit(request, nonce);
    } catch (error) {
      // The lease was lost with the request queued or in flight: refused, never written (SVC02), or
      // the database went out of reach (its outcome unknown: the nonce keeps a retry from running it twice).
      if (
        this.remote &&
        (error instanceof NotOwnerError || sqlState(error) === 'SVC02' || sqlState(error) === undefined)
      ) {
        throw unavailable(market);
      }
      throw error;
    }
  }

  /** The writers of every market (the cluster takes them over and follows them). */
  allWriters(): IterableIterator<MarketWriter> {
    return this.writers.values();
  }

  /**
   * Cancels an order of `accountId` wherever it is; unknown or foreign orders are ORDER_NOT_FOUND
   * (without reaching a writer: a deferred nonce is then left to the route to record).
   */
  async cancel(accountId: number, orderId: number, nonce?: DeferredNonce): Promise<OrderOutcome> {
    if (this.closed) throw new Error('the order service is closed');
    const stored =
      Number.isSafeInteger(orderId) && orderId > 0 ? await orderById(this.db, orderId) : undefined;
    if (!stored || stored.accountId !== accountId) {
      return { ok: false, code: 'ORDER_NOT_FOUND', message: `order ${orderId} not found` };
    }
    return this.submit(this.writers.get(stored.market)!, { type: 'cancel', accountId, orderId }, nonce);
  }

  /**
   * Amends a resting order of `accountId` (new total `amount` in base units and/or `price`, as decimal
   * text in the market's precision) wherever it is written; unknown or foreign orders are ORDER_NOT_FOUND.
   */
  async amend(
    accountId: number,
    orderId: number,
    change: { readonly amount?: bigint; readonly price?: bigint },
    nonce?: DeferredNonce,
  ): Promise<OrderOutcome> {
    if (this.closed) throw new Error('the order service is closed');
    const stored =
      Number.isSafeInteger(orderId) && orderId > 0 ? await orderById(this.db, orderId) : undefined;
    if (!stored || stored.accountId !== accountId) {
      return { ok: false, code: 'ORDER_NOT_FOUND', message: `order ${orderId} not found` };
    }
    return this.submit(
      this.writers.get(stored.market)!,
      { type: 'amend', accountId, orderId, side: stored.side, ...change },
      nonce,
    );
  }

  /**
   * Stops taking requests, waits until every queued one is answered and stores a snapshot of every
   * market with commands since its last, so the next start replays nothing. `snapshot: false` leaves
   * storage as a crash would (tests of the replay after a snapshot).
   */
  async close(options: { readonly snapshot?: boolean } = {}): Promise<void> {
    this.closed = true;
    clearInterval(this.snapshotTimer);
    for (const writer of this.writers.values()) await writer.drained();
    if (options.snapshot !== false) this.offerSnapshots();
    await this.snapshots?.flushed();
    await this.pipeline.close();
  }
}
