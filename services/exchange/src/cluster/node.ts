import { setTimeout as sleep } from 'node:timers/promises';
import { ConfigError } from '@platform/http-edge/env-settings';
import type { Database } from '../db/database.js';
import { sqlState } from '../db/database.js';
import type { DeferredNonce } from '../http/request-context.js';
import type { OrderOutcome, OrderRequest } from '../orders/requests.js';
import { type OrderService, unavailable } from '../orders/service.js';
import { type MarketWriter, NotOwnerError } from '../orders/writer.js';
import { BACKGROUND_JOBS, type BackgroundJob, background } from './background.js';
import type { ClusterConfig } from './config.js';
import { logTails, wholeTail } from './follow.js';
import type { ForwardAnswer, ForwardedRequest } from './forward.js';
import { FORWARD_TIMEOUT_MS, ForwardClient, ForwardFailed, livenessFor } from './forward-client.js';
import { startForwardServer } from './forward-server.js';
import { holdJobs, releaseJobs } from './jobs.js';
import {
  claimLeases,
  ensureLeases,
  heartbeat,
  keepFeedWanted,
  lastHeartbeat,
  leaveCluster,
  liveNodeIds,
  type MarketOwner,
  marketOwners,
  releaseLease,
  renewLeases,
} from './leases.js';

/** How many lease lengths a follower's wish for a market's feed lasts (renewed at half of it). */
const FEED_WANTED_LEASES = 10;

export interface ClusterLog {
  info(details: object, message: string): void;
  warn(details: object, message: string): void;
  error(details: object, message: string): void;
}

/**
 * One node of an exchange cluster (README "Running a cluster"). Every `tickMs` it beats its heart,
 * renews its market leases, gives up a market an operator moves or pins elsewhere (after writing its
 * queued requests) or one above its fair share, and takes markets without a live owner: it reads the
 * log tail its copy has not applied, then writes. Every `followMs` its copies of the markets other
 * nodes write apply their newly committed batches. Requests for markets written elsewhere go to the
 * owner over the internal channel (forward.ts); while a market has no owner they wait up to
 * `handoverWaitMs`, then are answered 503 `unavailable`.
 */
export class ClusterNode {
  private owners = new Map<string, MarketOwner>();
  private closed = false;
  private ticking: Promise<void> = Promise.resolve();
  private following: Promise<void> = Promise.resolve();
  private tickTimer: NodeJS.Timeout | undefined;
  private followTimer: NodeJS.Timeout | undefined;
  /** performance.now() until which this node's leases surely hold (renewal started + lease - a tick). */
  private validUntil = 0;
  private readonly client: ForwardClient;
  private server: { close: () => Promise<void> } | undefined;
  private lastShed = 0;
  /** The background jobs this node runs (cluster_jobs leases). */
  private jobs = new Set<BackgroundJob>();

  private constructor(
    private readonly db: Database,
    private readonly orders: OrderService,
    readonly config: ClusterConfig,
    private readonly key: Buffer,
    private readonly log: ClusterLog,
  ) {
    this.client = new ForwardClient(key, FORWARD_TIMEOUT_MS, livenessFor(config.leaseMs));
  }

  static async start(options: {
    readonly db: Database;
    readonly orders: OrderService;
    readonly config: ClusterConfig;
    /** The internal channel's key (derived from MASTER_KEY, the same on every node). */
    readonly key: Buffer;
    readonly log: ClusterLog;
  }): Promise<ClusterNode> {
    const node = new ClusterNode(options.db, options.orders, options.config, options.key, options.log);
    await refuseDuplicateNode(options.db, options.config);
    await ensureLeases(options.db, [...options.orders.markets.keys()]);
    // Before this node's market data and feed start (after this): the owners log the feed of the
    // markets this node follows from now on, and the follow below brings the copies past the batches
    // that committed without one.
    await node.keepFeedWanted();
    node.server = await startForwardServer({
      host: options.config.listen.host,
      port: options.config.listen.port,
      key: options.key,
      entry: (forwarded, nonce) => node.runForwarded(forwarded, nonce),
      onError: (error) => options.log.error({ err: error }, 'a forwarded order failed'),
    });
    options.orders.remote = (writer, request, nonce) => node.remote(writer, request, nonce);
    background.use((job) => node.jobs.has(job) && performance.now() < node.validUntil);
    await node.tick();
    await node.follow();
    node.scheduleTick();
    node.scheduleFollow();
    return node;
  }

  /** The owners as this node last read them. */
  ownerOf(market: string): MarketOwner | undefined {
    return this.owners.get(market);
  }

  private scheduleTick(): void {
    if (this.closed) return;
    this.tickTimer = setTimeout(() => {
      this.ticking = this.tick().finally(() => this.scheduleTick());
    }, this.config.tickMs);
  }

  private scheduleFollow(): void {
    if (this.closed) return;
    this.followTimer = setTimeout(() => {
      this.following = this.follow().finally(() => this.scheduleFollow());
    }, this.config.followMs);
  }

  private writers(): MarketWriter[] {
    return [...this.orders.allWriters()];
  }

  /** One round of heartbeat, renewal, handovers and claims; a failure (database out of reach) is logged. */
  private async tick(): Promise<void> {
    const { nodeId, nodeUrl, leaseMs } = this.config;
    const started = performance.now();
    try {
      const applied: Record<string, number> = {};
      for (const writer of this.writers()) applied[writer.market.id] = writer.commandSeq;
      await heartbeat(this.db, nodeId, nodeUrl, applied, background.rounds());
      await this.keepFeedWanted();
      const held = await renewLeases(this.db, nodeId, leaseMs);
      this.jobs = this.closed ? new Set() : await holdJobs(this.db, nodeId, BACKGROUND_JOBS, leaseMs);
      this.validUntil = started + leaseMs - this.config.tickMs;
      for (const writer of this.writers()) {
        const epoch = writer.epoch;
        if (epoch !== undefined && held.get(writer.market.id) !== epoch) {
          this.log.warn({ market: writer.market.id, epoch }, 'lost the lease of a market: following it');
          writer.release();
        }
      }
      for (const [market, epoch] of held) {
        if (this.orders.writer(market)?.epoch === epoch) continue;
        // Held under this node's id but not written by this process: its previous process was killed
        // and this one started within the lease, or a takeover failed. Renewed, it would keep the
        // market from every node; given up, it is claimed again below (a new epoch fences the old).
        this.log.warn({ market, epoch }, 'gave up a lease this process does not write');
        await releaseLease(this.db, nodeId, market, epoch);
      }
      this.readOwners(await marketOwners(this.db));
      if (this.closed) return;
      await this.handOverWhereWanted();
      const taken = await claimLeases(this.db, nodeId, leaseMs, leaseMs);
      for (const lease of taken) {
        const writer = this.orders.writer(lease.market);
        if (!writer) continue;
        let replayed: number;
        try {
          // The tail is read after the epoch was bumped: nothing the previous owner sends can commit any more.
          replayed = await writer.takeOver(
            {
              epoch: lease.epoch,
              slot: lease.slot,
              lastOrderId: lease.lastOrderId,
              lastTradeId: lease.lastTradeId,
            },
            (seq) => wholeTail(this.db, lease.market, seq),
          );
        } catch (error) {
          // Not written here after all: the lease goes back at once, or this node would renew it
          // with no writer behind it and the market would take no order.
          this.log.warn({ err: error, market: lease.market }, 'could not take a market over');
          await releaseLease(this.db, nodeId, lease.market, lease.epoch).catch(() => {});
          continue;
        }
        this.log.info({ market: lease.market, epoch: lease.epoch, replayed }, 'took a market over');
      }
      if (taken.length > 0) this.readOwners(await marketOwners(this.db));
    } catch (error) {
      this.log.warn({ err: error }, 'cluster round failed');
      if (performance.now() > this.validUntil) {
        // The leases may have expired: stop taking orders here (the fence refuses them anyway).
        for (const writer of this.writers()) if (writer.epoch !== undefined) writer.release();
      }
    }
  }

  /**
   * The leases as just read: where requests go from now on. A forward waiting at an owner that
   * lost the lease it was sent under and does not answer (paused: SIGSTOP, a frozen VM) ends now as
   * an unknown outcome (503), not after its 10 s timeout: that owner can no longer commit it.
   */
  private readOwners(owners: readonly MarketOwner[]): void {
    this.owners = new Map(owners.map((owner) => [owner.market, owner]));
    const failed = this.client.failWhereLeaseMoved((url, market, epoch) => {
      const owner = this.owners.get(market);
      return owner?.live === true && owner.url === url && owner.epoch === epoch;
    });
    if (failed > 0) {
      this.log.warn({ failed }, 'forwarded orders at an owner that lost its lease and does not answer: 503');
    }
  }

  /**
   * Asks the owners of the markets this node follows to log their feed (leases.ts), for
   * FEED_WANTED_LEASES leases: a node stalled for half of that finds batches without a feed
   * (orders/commits.ts `feedMissing`).
   */
  private async keepFeedWanted(): Promise<void> {
    const { nodeId, leaseMs } = this.config;
    await keepFeedWanted(this.db, nodeId, FEED_WANTED_LEASES * leaseMs, leaseMs);
  }

  /** Gives up markets moved or pinned to another live node, and one above the fair share now and then. */
  private async handOverWhereWanted(): Promise<void> {
    const { nodeId } = this.config;
    const owners = [...this.owners.values()];
    const liveNodes = await this.liveNodes();
    const share = Math.ceil(owners.length / Math.max(liveNodes.size, 1));
    const mine = owners.filter((o) => o.live && o.owner === nodeId);
    for (const owner of mine) {
      const target = owner.movingTo ?? owner.pinnedTo;
      if (target && target !== nodeId && liveNodes.has(target)) await this.handOver(owner.market);
    }
    const stillMine = mine.filter(
      (o) => !(o.movingTo ?? o.pinnedTo) || (o.movingTo ?? o.pinnedTo) === nodeId,
    );
    const unpinned = stillMine.filter((o) => o.pinnedTo !== nodeId && o.movingTo !== nodeId);
    if (
      stillMine.length > share &&
      unpinned.length > 0 &&
      performance.now() - this.lastShed > 4 * this.config.tickMs
    ) {
      this.lastShed = performance.now();
      await this.handOver(unpinned[unpinned.length - 1]!.market);
    }
  }

  private async liveNodes(): Promise<Set<string>> {
    return new Set(await liveNodeIds(this.db, this.config.leaseMs));
  }

  /** A planned handover: the queued requests are written, then the lease is given up for the next owner. */
  private async handOver(market: string): Promise<void> {
    const writer = this.orders.writer(market);
    if (!writer || writer.epoch === undefined) return;
    const epoch = await writer.handOver();
    if (epoch !== undefined) await releaseLease(this.db, this.config.nodeId, market, epoch);
    this.log.info({ market, epoch }, 'handed a market over');
  }

  /** Applies the batches committed by the owners of the markets this node follows. */
  private async follow(): Promise<void> {
    try {
      const after = new Map<string, number>();
      for (const writer of this.writers()) {
        if (writer.epoch === undefined && writer.idleNow) after.set(writer.market.id, writer.commandSeq);
      }
      const tails = await logTails(this.db, after);
      for (const [market, rows] of tails) await this.orders.writer(market)?.follow(rows);
    } catch (error) {
      this.log.warn({ err: error }, 'following the committed log failed');
    }
  }

  /**
   * A request for a market not written here: sent to its owner, or, while it has none (a takeover or
   * a planned move), held until one appears (written here if that is this node) for up to
   * `handoverWaitMs`, then 503.
   */
  private async remote(
    writer: MarketWriter,
    request: OrderRequest,
    nonce?: DeferredNonce,
  ): Promise<OrderOutcome> {
    const market = writer.market.id;
    const deadline = performance.now() + this.config.handoverWaitMs;
    for (;;) {
      if (this.closed) throw unavailable(market);
      if (writer.owned) return this.orders.submitHere(writer, request, nonce);
      const owner = this.owners.get(market);
      if (owner?.live && owner.owner && owner.owner !== this.config.nodeId && owner.url) {
        const answer = await this.forward(owner.url, owner.epoch, market, request, nonce);
        if (answer) return answer;
      }
      if (performance.now() > deadline) throw unavailable(market);
      await sleep(25);
    }
  }

  /** Sends one request to its owner; undefined when it was surely not run there (try again). */
  private async forward(
    url: string,
    epoch: number,
    market: string,
    request: OrderRequest,
    nonce?: DeferredNonce,
  ): Promise<OrderOutcome | undefined> {
    const forwarded: ForwardedRequest = {
      market,
      request,
      ...(nonce ? { nonce: { keyId: nonce.keyId, protocol: nonce.protocol, value: nonce.value } } : {}),
    };
    let answer: ForwardAnswer;
    try {
      answer = await this.client.send(url, forwarded, epoch);
    } catch (error) {
      if (error instanceof ForwardFailed && !error.maybeSent) return undefined;
      // It may have run there: never sent again. The route records the nonce on its way out, so the
      // request, if still on its way, is refused as a reused nonce rather than run late.
      this.log.warn({ err: error, market }, 'forwarded order without an answer');
      throw unavailable(market);
    }
    switch (answer.kind) {
      case 'outcome':
        if (nonce && answer.consumed) nonce.consumed = true;
        return answer.outcome;
      case 'not_owner':
        return undefined;
      case 'unknown':
        throw unavailable(market);
      case 'error':
        throw new Error(`the owner of ${market} failed: ${answer.message}`);
    }
  }

  /** The owner side of a forwarded request. */
  private async runForwarded(
    forwarded: ForwardedRequest,
    nonce: DeferredNonce | undefined,
  ): Promise<ForwardAnswer> {
    const writer = this.orders.writer(forwarded.market);
    if (!writer?.owned || this.closed) return { kind: 'not_owner' };
    try {
      const outcome = await writer.submit(forwarded.request, nonce);
      return { kind: 'outcome', outcome, consumed: nonce?.consumed ?? false };
    } catch (error) {
      // Refused before it was written: another node may run it.
      if (error instanceof NotOwnerError || sqlState(error) === 'SVC02') return { kind: 'not_owner' };
      if (sqlState(error) === undefined) return { kind: 'unknown' };
      throw error;
    }
  }

  /**
   * Leaves the cluster: hands every market over (its queued requests written first) so that the
   * other nodes take them at once, then stops.
   */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearTimeout(this.tickTimer);
    clearTimeout(this.followTimer);
    await this.ticking.catch(() => {});
    await this.following.catch(() => {});
    for (const writer of this.writers()) {
      if (writer.epoch === undefined) continue;
      try {
        await this.handOver(writer.market.id);
      } catch (error) {
        this.log.warn(
          { err: error, market: writer.market.id },
          'could not hand a market over (its lease will expire)',
        );
      }
    }
    background.use(() => false);
    await releaseJobs(this.db, this.config.nodeId).catch(() => {});
    await leaveCluster(this.db, this.config.nodeId).catch(() => {});
    this.client.close();
    await this.server?.close();
  }
}

/**
 * Refuses to start as a node id another live process is using (two processes given one NODE_ID
 * would take each market from each other every tick): when the id beat its heart within the lease,
 * watches it for a few ticks; a heartbeat that moves on is another process's. One that stays put is
 * a killed predecessor's (a process manager's restart), whose leases this node then takes back.
 */
async function refuseDuplicateNode(db: Database, config: ClusterConfig): Promise<void> {
  const before = await lastHeartbeat(db, config.nodeId, config.leaseMs);
  if (before === undefined) return;
  await sleep(Math.min(config.leaseMs, Math.max(4 * config.tickMs, 1_000)));
  const after = await lastHeartbeat(db, config.nodeId, config.leaseMs);
  if (after === undefined || after === before) return;
  throw new ConfigError(
    'NODE_ID',
    `"${config.nodeId}" is the id of another node running now (its heartbeat moved on while this one started): give each node its own NODE_ID`,
  );
}
