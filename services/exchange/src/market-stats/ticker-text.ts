import { v3Ticker } from '../orders/market-data.js';
import type { MarketStats } from './market-stats.js';

/**
 * The JSON text of each market's v3 ticker, kept until the market's version changes (a batch
 * committed, a trade left the window): a tickers request then costs a version check per market
 * and one string join, without formatting numbers or running the response serialiser. The text is
 * `JSON.stringify` of the ticker array, the bytes the route's serialiser gives for it (the
 * market-stats tests compare the route's bytes with the SQL-derived tickers).
 */
export class TickerText {
  private readonly cache = new Map<string, { readonly version: number; readonly text: string }>();

  constructor(private readonly stats: MarketStats) {}

  /** `[ticker, ...]` of the markets, in the order given. */
  v3List(ids: readonly string[], now: number): string {
    return `[${ids.map((id) => this.v3(id, now)).join(',')}]`;
  }

  private v3(id: string, now: number): string {
    const version = this.stats.version(id, now);
    const hit = this.cache.get(id);
    if (hit?.version === version) return hit.text;
    const text = JSON.stringify(v3Ticker(this.stats.summary(id, now)));
    this.cache.set(id, { version, text });
    return text;
  }
}
