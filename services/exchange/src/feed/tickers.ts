import { type MarketSummary, v3Ticker } from '../orders/market-data.js';
import { encode } from './encode.js';
import type { FeedHub } from './hub.js';
import type { Peer } from './peer.js';

/**
 * The `ticker` channel: the `GET /v3/tickers` array of a market, sent on subscribe and then at most
 * once per interval when it changed: batches changed the market, or trades left the 24 h window
 * (`version` moved). The 24 h figures come from the same source as the REST tickers (the rolling
 * statistics in memory, src/market-stats/), and the round runs only while someone follows a ticker.
 */
export class TickerRound {
  private timer: NodeJS.Timeout | undefined;
  private running = false;
  /** The last ticker frame sent per market: a batch that left the ticker as it was sends nothing. */
  private readonly lastSent = new Map<string, string>();
  /** The market's `version` when its last frame was made. */
  private readonly lastVersion = new Map<string, number>();

  constructor(
    private readonly hub: FeedHub,
    /** Every market's summary at a time (MarketStats.summaries). */
    private readonly summaries: (now: number) => MarketSummary[],
    /** A number that moves when a market's summary at `now` may have changed (MarketStats.version). */
    private readonly version: (marketId: string, now: number) => number,
    private readonly now: () => number,
    private readonly intervalMs: number,
    private readonly onError: (error: unknown) => void,
  ) {}

  start(): void {
    this.timer = setInterval(() => void this.round(), this.intervalMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /** The ticker frame of one market, for a new subscriber. */
  async current(marketId: string): Promise<string> {
    const summary = this.summaries(this.now()).find((s) => s.market.id === marketId)!;
    return frame(marketId, v3Ticker(summary));
  }

  private async round(): Promise<void> {
    if (this.running || !this.hub.tickersFollowed) return;
    const followed = this.hub.takeFollowedTickers();
    const now = this.now();
    const due = new Map<string, ReadonlySet<Peer>>();
    for (const [id, { peers, changed }] of followed) {
      // Asking the version evicts the trades that left the window: a quiet market's ticker moves too.
      const version = this.version(id, now);
      if (changed || this.lastVersion.get(id) !== version) due.set(id, peers);
      this.lastVersion.set(id, version);
    }
    if (due.size === 0) return;
    this.running = true;
    try {
      const list = this.summaries(now);
      for (const summary of list) {
        const peers: ReadonlySet<Peer> | undefined = due.get(summary.market.id);
        if (!peers) continue;
        const text = frame(summary.market.id, v3Ticker(summary));
        if (this.lastSent.get(summary.market.id) === text) continue;
        this.lastSent.set(summary.market.id, text);
        const encoded = encode(text);
        for (const peer of peers) peer.deliver(encoded);
      }
    } catch (error) {
      this.onError(error);
    } finally {
      this.running = false;
    }
  }
}

function frame(market: string, ticker: unknown): string {
  return JSON.stringify({ event: 'ticker', channel: 'ticker', market, ticker });
}
