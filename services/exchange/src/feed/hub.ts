import { formatAmount } from '../money/decimal.js';
import type { CommittedBatch } from '../orders/commits.js';
import { v3Order } from '../orders/format.js';
import type { TradingMarket } from '../orders/markets.js';
import type { OrderService } from '../orders/service.js';
import type { OrderRow } from '../orders/store.js';
import type { ReferenceData } from '../reference/load.js';
import type { BookDiff } from './book-levels.js';
import { wireLevel, wireSide } from './book-levels.js';
import { encode } from './encode.js';
import { CLOSE } from './errors.js';
import { GroupedLevels } from './grouped-book.js';
import { Outbox } from './outbox.js';
import type { Peer } from './peer.js';
import type { PrivateChannel, PublicChannel } from './protocol.js';

interface MarketState {
  readonly market: TradingMarket;
  /** The committed book as of the last flush, grouped: the book the last `book` frame left every follower with. */
  readonly book: GroupedLevels;
  /**
   * The command log's sequence number after the last batch whose frames were made (the committed
   * log's numbers, the same on every node of a cluster): a snapshot carries it, every later frame of
   * the market a greater one.
   */
  seq: number;
  readonly peers: Record<PublicChannel, Set<Peer>>;
  /** A batch changed the market since the last ticker round. */
  tickerDirty: boolean;
}

/**
 * The fan-out of committed batches to the feed's subscribers. Committed batches are taken from the
 * order writers (orders.commits) without doing any work on the writer's path but queueing, and turned
 * into frames on a later turn of the event loop, once the frames of the previous flush were written.
 * Every batch makes its own frames, stamped with the command log's sequence numbers of the batch
 * (`seq` after it, `prev_seq` before it): on a node of a cluster that follows the market, the batch
 * comes from the committed log with what its owner logged beside it (orders/batch-feed.ts), so every
 * node sends the same frames under the same numbers. A market's book diff is computed per batch
 * against the book the previous frame left, and serialised once for all followers.
 */
export class FeedHub {
  private readonly markets = new Map<string, MarketState>();
  private readonly privatePeers: Record<PrivateChannel, Map<number, Set<Peer>>> = {
    orders: new Map(),
    balances: new Map(),
  };
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
    /** Socket writes per turn of the event loop (see Outbox). @default 256 */
    sendsPerTurn = 256,
  ) {
    // While the outbox still writes, new batches wait and are coalesced into the next flush.
    this.outbox = new Outbox(sendsPerTurn, () => {
      if (this.dirty) this.scheduleFlush();
    });
  }

  /**
   * Starts following committed batches, from each market's committed view and its sequence number
   * (in a cluster, batches of forwarded orders may be in flight already): the book and the number
   * the first diff is taken against.
   */
  start(): void {
    for (const market of this.orders.markets.values()) {
      this.markets.set(market.id, {
        market,
        book: new GroupedLevels(market, this.orders.writer(market.id)!.view()),
        seq: this.orders.writer(market.id)!.committedSeq,
        peers: { trades: new Set(), book: new Set(), ticker: new Set() },
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
    return this.markets.get(id)?.market;
  }

  /**
   * Queues a `book` snapshot of a market for one connection, behind the frames already queued for
   * it. It is made when its turn comes, from the book and sequence number of that moment: a flood of
   * subscriptions queues closures, not copies of the book, and the connection's send buffer bound
   * applies to each. Diffs queued before it but written after carry sequence numbers the snapshot
   * already covers: clients skip diffs not newer than their snapshot (BookFollower).
   */
  sendSnapshot(peer: Peer, marketId: string): void {
    const state = this.markets.get(marketId)!;
    this.outbox.push(
      () =>
        JSON.stringify({
          event: 'snapshot',
          channel: 'book',
          market: marketId,
          seq: state.seq,
          bids: wireSide(state.market, state.book.book.bids, true),
          asks: wireSide(state.market, state.book.book.asks, false),
        }),
      [peer],
    );
  }

  /**
   * The sequence number a new subscription of the market starts after: it receives every frame of
   * the market with a greater `seq` (the `subscribed` answer carries it; a client that comes from
   * another node and saw less may have missed frames in between).
   */
  position(marketId: string): number {
    return this.markets.get(marketId)!.seq;
  }

  /** `position` of every market (a private channel's `subscribed` answer). */
  positions(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const [id, state] of this.markets) out[id] = state.seq;
    return out;
  }

  addPublic(peer: Peer, channel: PublicChannel, marketId: string): void {
    this.markets.get(marketId)!.peers[channel].add(peer);
  }

  removePublic(peer: Peer, channel: PublicChannel, marketId: string): void {
    this.markets.get(marketId)?.peers[channel].delete(peer);
  }

  addPrivate(peer: Peer, channel: PrivateChannel, accountId: number): void {
    const byAccount = this.privatePeers[channel];
    const peers = byAccount.get(accountId) ?? new Set();
    peers.add(peer);
    byAccount.set(accountId, peers);
  }

  removePrivate(peer: Peer, channel: PrivateChannel, accountId: number): void {
    const peers = this.privatePeers[channel].get(accountId);
    peers?.delete(peer);
    if (peers?.size === 0) this.privatePeers[channel].delete(accountId);
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
    // Kept whether followed or not: the book must stay the committed one for a later snapshot.
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
    const anyPrivate = this.privatePeers.orders.size > 0 || this.privatePeers.balances.size > 0;
    for (const batch of batches) {
      const state = this.markets.get(batch.market.id)!;
      if (batch.feedMissing) this.closeMissed(state, batch);
      this.flushBatch(state, batch);
      if (anyPrivate) this.flushPrivate(batch);
      if (batch.seq > state.seq) state.seq = batch.seq;
    }
  }

  private flushBatch(state: MarketState, batch: CommittedBatch): void {
    const id = state.market.id;
    // A whole rebuilt book covers every batch since the last one this hub published, whatever the
    // writer knew of them: its diff chains from there.
    const prevSeq = batch.book ? Math.min(batch.prevSeq, state.seq) : batch.prevSeq;
    // A batch without commands (every request refused before the engine) is not in the log.
    const logged = batch.seq > prevSeq;
    if (logged && batch.trades.length > 0 && state.peers.trades.size > 0) {
      const text = encode({
        event: 'trades',
        channel: 'trades',
        market: id,
        seq: batch.seq,
        trades: batch.trades.map((trade) => ({
          id: trade.id,
          price: state.market.formatPrice(trade.price),
          amount: state.market.formatAmount(trade.amount),
          side: trade.takerSide,
          at: trade.createdAt,
        })),
      });
      this.outbox.push(text, state.peers.trades);
    }
    let diff: BookDiff | undefined;
    if (batch.book) diff = state.book.replaceWithDiff(batch.book);
    state.book.apply(batch.levels);
    const changed = state.book.takeDiff();
    if (changed) diff = diff ? mergeDiffs(diff, changed) : changed;
    if (!logged || state.peers.book.size === 0) return;
    // Sent even when no displayed level changed, so that the diffs of a market chain `prev_seq` to
    // `seq` without a hole: a client sees a missed frame by the numbers alone.
    const text = encode({
      event: 'diff',
      channel: 'book',
      market: id,
      seq: batch.seq,
      prev_seq: prevSeq,
      bids: (diff?.bids ?? []).map((change) => wireLevel(state.market, change)),
      asks: (diff?.asks ?? []).map((change) => wireLevel(state.market, change)),
    });
    this.outbox.push(text, state.peers.book);
  }

  /**
   * A batch came without its trades, orders and balances (orders/commits.ts `feedMissing`): the
   * market's trades followers and every private follower (the batch's accounts are not known) would
   * miss frames without seeing it by the numbers, so they are closed (4009) to resubscribe. The book
   * stays exact (the levels are the engine's). The reason names the market and the batch's sequence
   * numbers, so that a client knows from where to read the REST API (under 123 bytes: market ids are
   * at most 24 characters).
   */
  private closeMissed(state: MarketState, batch: CommittedBatch): void {
    const peers = new Set<Peer>(state.peers.trades);
    for (const channel of Object.values(this.privatePeers))
      for (const accountPeers of channel.values()) for (const peer of accountPeers) peers.add(peer);
    const reason = `feed gap: ${batch.market.id} seq ${batch.prevSeq + 1}-${batch.seq} not logged; resubscribe`;
    for (const peer of peers) peer.close(CLOSE.feedGap, reason);
  }

  /** The batch's `orders` and `balances` frames, one of each per account that follows them. */
  private flushPrivate(batch: CommittedBatch): void {
    const market = batch.market.id;
    const byAccount = new Map<number, OrderRow[]>();
    for (const order of batch.orders) {
      if (!this.privatePeers.orders.has(order.accountId)) continue;
      const list = byAccount.get(order.accountId) ?? [];
      list.push(order);
      byAccount.set(order.accountId, list);
    }
    for (const [accountId, list] of byAccount) {
      list.sort((a, b) => a.id - b.id);
      const text = encode({
        event: 'orders',
        channel: 'orders',
        market,
        seq: batch.seq,
        orders: list.map((order) => v3Order(this.orders.market(order.market)!, order)),
      });
      this.outbox.push(text, this.privatePeers.orders.get(accountId) ?? []);
    }
    const balancesOf = new Map<number, { currency: string; available: string }[]>();
    for (const [key, available] of batch.balances) {
      const at = key.indexOf(':');
      const accountId = Number(key.slice(0, at));
      if (!this.privatePeers.balances.has(accountId)) continue;
      const currency = key.slice(at + 1);
      const list = balancesOf.get(accountId) ?? [];
      list.push({ currency, available: formatAmount(available, this.reference.ledgerPrecision(currency)) });
      balancesOf.set(accountId, list);
    }
    for (const [accountId, list] of balancesOf) {
      list.sort((a, b) => (a.currency < b.currency ? -1 : a.currency > b.currency ? 1 : 0));
      const text = encode({ event: 'balances', channel: 'balances', market, seq: batch.seq, balances: list });
      this.outbox.push(text, this.privatePeers.balances.get(accountId) ?? []);
    }
  }
}

/** `first` then `second` as one diff: a level of `second` replaces the same level of `first`. */
function mergeDiffs(first: BookDiff, second: BookDiff): BookDiff {
  const side = (a: BookDiff['bids'], b: BookDiff['bids']) => {
    const byPrice = new Map(a.map((change) => [change[0], change]));
    for (const change of b) byPrice.set(change[0], change);
    return [...byPrice.values()];
  };
  return { bids: side(first.bids, second.bids), asks: side(first.asks, second.asks) };
}
