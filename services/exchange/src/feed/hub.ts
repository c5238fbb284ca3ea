import type { CommittedBatch } from '../orders/commits.js';
import type { TradingMarket } from '../orders/markets.js';
import type { OrderService } from '../orders/service.js';
import type { ReferenceData } from '../reference/load.js';
import { CLOSE } from './errors.js';
import { FanOutPace, processCpu } from './fan-out-pace.js';
import { FrameJournal, type JournalEntry, type JournalLimits } from './journal.js';
import { type BatchFrames, MarketFrames } from './market-frames.js';
import { Outbox, type QueuedFrame } from './outbox.js';
import type { Peer } from './peer.js';
import { PeerSet } from './peer-set.js';
import { privateFrames } from './private-frames.js';
import { PRIVATE_CHANNELS, type PrivateChannel, type SequencedChannel } from './protocol.js';

/** Channels of one market that the hub fans out (candles have their own round, src/candles/). */
type HubChannel = SequencedChannel | 'ticker';

interface MarketState {
  readonly frames: MarketFrames;
  readonly journal: FrameJournal;
  readonly peers: Record<HubChannel, PeerSet>;
  /**
   * Peers that resumed from a sequence number this node had not reached yet (they came from a node
   * ahead of this one): they get only the frames after that number, then the gate goes.
   */
  readonly gates: Record<SequencedChannel, Map<Peer, number>>;
  /** A batch changed the market since the last ticker round. */
  tickerDirty: boolean;
}

/** The default of FEED_RESUME_FRAMES and FEED_RESUME_MAX_BYTES (config.ts). */
export const DEFAULT_JOURNAL: JournalLimits = { frames: 10_000, maxBytes: 64 * 1024 * 1024 };

/**
 * The fan-out of committed batches to the feed's subscribers. Committed batches are taken from the
 * order writers (orders.commits) without doing any work on the writer's path but queueing, and turned
 * into frames on a later turn of the event loop, once the frames of the previous flush were written.
 * Every batch makes its own frames (market-frames.ts), stamped with the command log's sequence
 * numbers of the batch (`seq` after it, `prev_seq` before it): on a node of a cluster that follows
 * the market, the batch comes from the committed log with what its owner logged beside it
 * (orders/batch-feed.ts), so every node sends the same frames under the same numbers. Each frame is
 * serialised once for all followers, and kept in the market's journal (journal.ts) for the clients
 * that resume after a lost connection (`from_seq`).
 */
export class FeedHub {
  private readonly markets = new Map<string, MarketState>();
  private readonly privatePeers: Record<PrivateChannel, Map<number, PeerSet>> = {
    orders: new Map(),
    balances: new Map(),
    fills: new Map(),
  };
  /** Private subscriptions that resumed ahead of this node, by `channel:market` (see MarketState.gates). */
  private readonly privateGates = new Map<Peer, Map<string, number>>();
  /** Batches taken since the last flush, in the order they were committed (per market). */
  private pending: CommittedBatch[] = [];
  private flushScheduled = false;
  /** Batches came in since the last flush. */
  private dirty = false;
  private unsubscribe: (() => void) | undefined;
  private readonly outbox: Outbox;
  /** Frames the connections did not deliver, by reason (counted by FeedConnection.deliver, for the metrics). */
  readonly dropped = { slow_consumer: 0, closed: 0 };

  constructor(
    private readonly orders: OrderService,
    private readonly reference: ReferenceData,
    private readonly journalLimits: JournalLimits = DEFAULT_JOURNAL,
    /** The share of the process's CPU the fan-out's writes may take, and its longest wait (fan-out-pace.ts). @default no pacing */
    fanOut: { readonly share: number; readonly maxDelayMs: number } = { share: 1, maxDelayMs: 0 },
    /** A failure the feed recovered from (logged by the caller). @default none */
    private readonly onError: (error: unknown) => void = () => {},
    /** Connections written per turn of the event loop (see Outbox). @default 256 */
    sendsPerTurn = 256,
  ) {
    // While the outbox still writes, new batches wait and are coalesced into the next flush.
    this.outbox = new Outbox(
      sendsPerTurn,
      () => {
        if (this.dirty) this.scheduleFlush();
      },
      fanOut.share < 1
        ? new FanOutPace(fanOut.share, fanOut.maxDelayMs, processCpu, () => performance.now())
        : undefined,
    );
  }

  /**
   * Starts following committed batches, from each market's committed view and its sequence number
   * (in a cluster, batches of forwarded orders may be in flight already): the books and the number
   * the first diff is taken against.
   */
  start(): void {
    for (const market of this.orders.markets.values()) {
      const writer = this.orders.writer(market.id)!;
      const seq = writer.committedSeq;
      this.markets.set(market.id, {
        frames: new MarketFrames(market, writer.view(), writer.committedLive(), seq, {
          live: () => ({ orders: writer.committedLive(), seq: writer.committedSeq }),
          onError: this.onError,
        }),
        journal: new FrameJournal(this.journalLimits, seq),
        peers: { trades: new PeerSet(), book: new PeerSet(), book_l3: new PeerSet(), ticker: new PeerSet() },
        gates: { trades: new Map(), book: new Map(), book_l3: new Map() },
        tickerDirty: false,
      });
    }
    this.unsubscribe = this.orders.commits.subscribe((batch) => this.take(batch));
  }

  stop(): void {
    this.unsubscribe?.();
    this.unsubscribe = undefined;
  }

  market(id: string): TradingMarket | undefined {
    return this.markets.get(id)?.frames.market;
  }

  /** The frames of a market (tests and the REST book's numbers). */
  framesOf(id: string): MarketFrames | undefined {
    return this.markets.get(id)?.frames;
  }

  /** Queues frames for peers, behind everything queued before (candles, answers that must follow frames). */
  send(frame: QueuedFrame, peers: Iterable<Peer>): void {
    this.outbox.push(frame, peers);
  }

  /**
   * Queues a `book` (or `book_l3`) snapshot of a market for one connection, behind the frames already
   * queued for it. It is made when its turn comes, from the book and sequence number of that moment:
   * a flood of subscriptions queues closures, not copies of the book, and the connection's send
   * buffer bound applies to each. Diffs queued before it but written after carry sequence numbers the
   * snapshot already covers: clients skip diffs not newer than their snapshot (BookFollower).
   */
  sendSnapshot(peer: Peer, marketId: string, channel: 'book' | 'book_l3', resumed?: false): void {
    const frames = this.markets.get(marketId)!.frames;
    this.outbox.push(
      () => (channel === 'book' ? frames.bookSnapshot(resumed) : frames.l3Snapshot(resumed)),
      [peer],
    );
  }

  /**
   * The sequence number a new subscription of the market starts after: it receives every frame of
   * the market with a greater `seq` (the `subscribed` answer carries it; a client that comes from
   * another node and saw less may have missed frames in between).
   */
  position(marketId: string): number {
    return this.markets.get(marketId)!.frames.seq;
  }

  /** `position` of every market (a private channel's `subscribed` answer). */
  positions(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const [id, state] of this.markets) out[id] = state.frames.seq;
    return out;
  }

  addPublic(peer: Peer, channel: HubChannel, marketId: string): void {
    this.markets.get(marketId)!.peers[channel].add(peer);
  }

  removePublic(peer: Peer, channel: HubChannel, marketId: string): void {
    const state = this.markets.get(marketId);
    state?.peers[channel].delete(peer);
    if (channel !== 'ticker') state?.gates[channel].delete(peer);
  }

  /**
   * Subscribes `peer` to a sequenced channel from after `after` (`from_seq`): the journal's frames
   * after it are queued for the peer now, then it follows live. False when the journal no longer
   * holds them all (the peer is then not subscribed; the caller subscribes it as new). From a number
   * this node has not reached (the client came from a node ahead), the frames up to it are skipped.
   */
  resume(peer: Peer, channel: SequencedChannel, marketId: string, after: number): boolean {
    const state = this.markets.get(marketId)!;
    if (after > state.frames.seq) {
      state.gates[channel].set(peer, after);
    } else {
      const entries = this.replayable(state, after, channel === 'trades');
      if (!entries) return false;
      this.replay(
        peer,
        lazy(entries, (entry) => framesOf(entry.frames, channel)),
      );
    }
    state.peers[channel].add(peer);
    return true;
  }

  /**
   * `resume` for a private channel of the account: `from` gives, per market, the sequence number to
   * resume after. All or nothing: false (and nothing queued) when one market's frames are not all held.
   */
  resumePrivate(
    peer: Peer,
    channel: PrivateChannel,
    accountId: number,
    from: Readonly<Record<string, number>>,
  ): boolean {
    const replays: JournalEntry[][] = [];
    const ahead = new Map<string, number>();
    for (const [marketId, after] of Object.entries(from)) {
      const state = this.markets.get(marketId)!;
      if (after > state.frames.seq) {
        ahead.set(`${channel}:${marketId}`, after);
        continue;
      }
      const entries = this.replayable(state, after, true);
      if (!entries) return false;
      replays.push(entries);
    }
    const mine = (id: number) => id === accountId;
    this.replay(
      peer,
      lazy(replays.flat(), (entry) =>
        privateFrames(this.reference, entry.batch, channel, mine).get(accountId),
      ),
    );
    if (ahead.size > 0)
      this.privateGates.set(peer, new Map([...(this.privateGates.get(peer) ?? []), ...ahead]));
    this.addPrivate(peer, channel, accountId);
    return true;
  }

  /** A resume's frames for one connection: taken as it drains when it can (send-queue.ts), else queued. */
  private replay(peer: Peer, frames: Iterable<Buffer>): void {
    if (peer.replay) peer.replay(frames);
    else for (const frame of frames) this.outbox.push(frame, [peer]);
  }

  /**
   * The journal's entries after `after`, or undefined when it does not hold them all (or, for frames
   * made of a batch's trades, orders and balances, when one of those batches came without them).
   */
  private replayable(state: MarketState, after: number, needsFeed: boolean): JournalEntry[] | undefined {
    if (!state.journal.covers(after)) return undefined;
    const entries = state.journal.after(after);
    if (needsFeed && entries.some((entry) => entry.batch.feedMissing)) return undefined;
    return entries;
  }

  addPrivate(peer: Peer, channel: PrivateChannel, accountId: number): void {
    const byAccount = this.privatePeers[channel];
    const peers = byAccount.get(accountId) ?? new PeerSet();
    peers.add(peer);
    byAccount.set(accountId, peers);
  }

  removePrivate(peer: Peer, channel: PrivateChannel, accountId: number): void {
    const peers = this.privatePeers[channel].get(accountId);
    peers?.delete(peer);
    if (peers?.size === 0) this.privatePeers[channel].delete(accountId);
    if (!PRIVATE_CHANNELS.some((other) => this.privatePeers[other].get(accountId)?.has(peer)))
      this.privateGates.delete(peer);
  }

  /**
   * Markets with ticker subscribers, each with whether a batch changed it since the last call (clears
   * the marks).
   */
  takeFollowedTickers(): Map<string, { readonly peers: ReadonlySet<Peer>; readonly changed: boolean }> {
    const out = new Map<string, { readonly peers: ReadonlySet<Peer>; readonly changed: boolean }>();
    for (const [id, state] of this.markets) {
      if (state.peers.ticker.size > 0) out.set(id, { peers: state.peers.ticker, changed: state.tickerDirty });
      state.tickerDirty = false;
    }
    return out;
  }

  /** Whether any connection follows a ticker (the ticker round does nothing otherwise). */
  get tickersFollowed(): boolean {
    for (const state of this.markets.values()) if (state.peers.ticker.size > 0) return true;
    return false;
  }

  /** Follower of the commit feed: only queues (runs on the order writer's path). */
  private take(batch: CommittedBatch): void {
    const state = this.markets.get(batch.market.id);
    if (!state) return;
    // Kept whether followed or not: the books must stay the committed ones for a later snapshot.
    this.pending.push(batch);
    state.tickerDirty = true;
    this.dirty = true;
    if (this.outbox.empty) this.scheduleFlush();
  }

  private scheduleFlush(): void {
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    setImmediate(() => this.flush());
  }

  /** Queues the frames of the batches taken since the last flush, batch by batch. */
  flush(): void {
    this.flushScheduled = false;
    this.dirty = false;
    const batches = this.pending;
    this.pending = [];
    for (const batch of batches) {
      const state = this.markets.get(batch.market.id)!;
      if (batch.feedMissing) this.closeMissed(state, batch);
      const frames = state.frames.take(batch);
      if (!frames) continue;
      state.journal.push(frames, batch);
      for (const channel of ['trades', 'book', 'book_l3'] as const) {
        const frame = framesOf(frames, channel);
        if (frame) this.fanOut(state, channel, frames.seq, frame);
      }
      this.flushPrivate(batch);
    }
  }

  /** Queues a frame for the channel's peers, leaving out those gated past its number. */
  private fanOut(state: MarketState, channel: SequencedChannel, seq: number, frame: Buffer): void {
    const peers = state.peers[channel];
    if (peers.size === 0) return;
    const gates = state.gates[channel];
    if (gates.size === 0) {
      this.outbox.push(frame, peers.list());
      return;
    }
    const open: Peer[] = [];
    for (const peer of peers) {
      const gate = gates.get(peer);
      if (gate === undefined) open.push(peer);
      else if (seq > gate) {
        gates.delete(peer);
        open.push(peer);
      }
    }
    this.outbox.push(frame, open);
  }

  /**
   * A batch came without its trades, orders and balances (orders/commits.ts `feedMissing`): the
   * market's trades followers and every private follower (the batch's accounts are not known) would
   * miss frames without seeing it by the numbers, so they are closed (4009) to resubscribe. The books
   * stay exact (the levels and the events are the engine's). The reason names the market and the
   * batch's sequence numbers, so that a client knows from where to read the REST API (under 123
   * bytes: market ids are at most 24 characters).
   */
  private closeMissed(state: MarketState, batch: CommittedBatch): void {
    const peers = new Set<Peer>(state.peers.trades);
    for (const channel of Object.values(this.privatePeers))
      for (const accountPeers of channel.values()) for (const peer of accountPeers) peers.add(peer);
    const reason = `feed gap: ${batch.market.id} seq ${batch.prevSeq + 1}-${batch.seq} not logged; resubscribe`;
    for (const peer of peers) peer.close(CLOSE.feedGap, reason);
  }

  /** The batch's private frames, one per channel and account that follows it. */
  private flushPrivate(batch: CommittedBatch): void {
    for (const channel of PRIVATE_CHANNELS) {
      const byAccount = this.privatePeers[channel];
      if (byAccount.size === 0) continue;
      const frames = privateFrames(this.reference, batch, channel, (id) => byAccount.has(id));
      for (const [accountId, frame] of frames) {
        const peers = byAccount.get(accountId)!;
        this.outbox.push(
          frame,
          this.privateGates.size === 0 ? peers.list() : this.ungated(peers, channel, batch),
        );
      }
    }
  }

  private ungated(peers: Set<Peer>, channel: PrivateChannel, batch: CommittedBatch): Peer[] {
    const key = `${channel}:${batch.market.id}`;
    const open: Peer[] = [];
    for (const peer of peers) {
      const gates = this.privateGates.get(peer);
      const gate = gates?.get(key);
      if (gate === undefined) open.push(peer);
      else if (batch.seq > gate) {
        gates!.delete(key);
        if (gates!.size === 0) this.privateGates.delete(peer);
        open.push(peer);
      }
    }
    return open;
  }
}

function framesOf(frames: BatchFrames, channel: SequencedChannel): Buffer | undefined {
  return channel === 'trades' ? frames.trades : channel === 'book' ? frames.book : frames.l3;
}

/** The frames of `entries` (those `frameOf` gives), made one at a time as they are taken. */
function* lazy(
  entries: readonly JournalEntry[],
  frameOf: (entry: JournalEntry) => Buffer | undefined,
): Generator<Buffer> {
  for (const entry of entries) {
    const frame = frameOf(entry);
    if (frame) yield frame;
  }
}
