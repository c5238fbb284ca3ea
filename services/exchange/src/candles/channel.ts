import { setTimeout as sleep } from 'node:timers/promises';
import type { Sql } from '../db/database.js';
import type { CommitFeed, CommittedBatch } from '../orders/commits.js';
import type { TradingMarket } from '../orders/markets.js';
import { type Candle, type CandleTrade, wireCandle, withTrade } from './candle.js';
import { candleStart, RESOLUTIONS, type Resolution } from './resolutions.js';
import { storedCandles } from './store.js';

/** Where the channel sends its frames, and to whom (the feed's connections: src/feed/). */
export interface CandleReceiver {
  deliver(frame: string | Buffer): void;
}

/** The fan-out the channel writes through (the feed's outbox, so a frame for many costs one turn's share). */
export type CandleSend = (frame: Buffer, peers: Iterable<CandleReceiver>) => void;

/** How long a failed read of the current candle waits before it is tried again. */
const READ_RETRY_MS = 1_000;

interface Followed {
  readonly market: TradingMarket;
  readonly resolution: Resolution;
  readonly peers: Set<CandleReceiver>;
  /** The candle of the newest interval with a trade, once read. */
  candle: Candle | undefined;
  /** While the current interval is read from storage: the trades followed meanwhile. */
  held: CandleTrade[] | undefined;
  /** A read must start again when it ends (a batch came without its trades during it). */
  readAgain: boolean;
}

/**
 * The `candles` channel of the live feed: per market and resolution with subscribers, the candle of
 * the newest interval, sent on subscribe and again after every committed batch that changed it.
 * Its first value is read from the stored trades (store.ts, the candles of the REST route), then the
 * committed batches' trades move it; trades counted by both are told apart by id (a market's trades
 * are numbered in commit order), so every node and a restarted one show the same values. A batch a
 * cluster node followed without its trades (`feedMissing`) makes it read the candle again.
 */
export class CandleChannel {
  private readonly followed = new Map<string, Followed>();
  private pending: CommittedBatch[] = [];
  private scheduled = false;
  private unsubscribe: (() => void) | undefined;

  constructor(
    private readonly db: Sql,
    private readonly commits: CommitFeed,
    private readonly now: () => number,
    private readonly send: CandleSend,
    private readonly onError: (error: unknown) => void,
  ) {}

  start(): void {
    this.unsubscribe = this.commits.subscribe((batch) => {
      if (batch.trades.length === 0 && !batch.feedMissing) return;
      if (!this.marketFollowed(batch.market.id)) return;
      this.pending.push(batch);
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  stop(): void {
    this.unsubscribe?.();
  }

  add(peer: CandleReceiver, market: TradingMarket, resolution: Resolution): void {
    const key = `${market.id}:${resolution}`;
    let entry = this.followed.get(key);
    if (!entry) {
      entry = { market, resolution, peers: new Set(), candle: undefined, held: undefined, readAgain: false };
      this.followed.set(key, entry);
      entry.peers.add(peer);
      void this.read(entry);
      return;
    }
    entry.peers.add(peer);
    // A new subscriber gets the current candle (once read; the read sends it to all).
    if (!entry.held && entry.candle) peer.deliver(this.frame(entry, entry.candle));
  }

  remove(peer: CandleReceiver, marketId: string, resolution: Resolution): void {
    const key = `${marketId}:${resolution}`;
    const entry = this.followed.get(key);
    if (!entry) return;
    entry.peers.delete(peer);
    if (entry.peers.size === 0) this.followed.delete(key);
  }

  private marketFollowed(marketId: string): boolean {
    for (const entry of this.followed.values()) if (entry.market.id === marketId) return true;
    return false;
  }

  /** Reads the current interval's candle from the stored trades, taking the trades followed meanwhile. */
  private async read(entry: Followed): Promise<void> {
    entry.held = [];
    for (;;) {
      entry.readAgain = false;
      const start = candleStart(entry.resolution, this.now());
      let stored: Candle | undefined;
      try {
        // The newest interval with a trade, looking back one interval (a quiet minute keeps its last candle).
        const before = start - RESOLUTIONS[entry.resolution];
        const rows = await storedCandles(this.db, entry.market.id, entry.resolution, before, start, 2);
        stored = rows[rows.length - 1];
      } catch (error) {
        // Tried again while someone follows it: a candle without the interval's earlier trades would be wrong.
        this.onError(error);
        await sleep(READ_RETRY_MS);
        if (this.followed.get(`${entry.market.id}:${entry.resolution}`) !== entry) return;
        continue;
      }
      if (entry.readAgain) continue;
      let candle = stored ?? entry.candle;
      for (const trade of entry.held) candle = withTrade(entry.resolution, candle, trade);
      entry.held = undefined;
      entry.candle = candle;
      if (candle && this.followed.get(`${entry.market.id}:${entry.resolution}`) === entry)
        this.send(this.frame(entry, candle), entry.peers);
      return;
    }
  }

  private flush(): void {
    this.scheduled = false;
    const batches = this.pending;
    this.pending = [];
    for (const batch of batches) {
      for (const entry of this.followed.values()) {
        if (entry.market.id !== batch.market.id) continue;
        if (batch.feedMissing) {
          if (entry.held) entry.readAgain = true;
          else void this.read(entry);
          continue;
        }
        if (entry.held) {
          entry.held.push(...batch.trades);
          continue;
        }
        const before = entry.candle;
        let candle = before;
        for (const trade of batch.trades) candle = withTrade(entry.resolution, candle, trade);
        entry.candle = candle;
        if (candle && candle !== before) this.send(this.frame(entry, candle), entry.peers);
      }
    }
  }

  private frame(entry: Followed, candle: Candle): Buffer {
    return Buffer.from(
      JSON.stringify({
        event: 'candle',
        channel: 'candles',
        market: entry.market.id,
        resolution: entry.resolution,
        candle: wireCandle(entry.market, candle),
      }),
    );
  }
}
