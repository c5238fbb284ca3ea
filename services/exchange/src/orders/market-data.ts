import type { WindowStats } from '../market-stats/rolling-day.js';
import { amountToNumber } from '../money/decimal.js';
import type { ExchangeRate, ReferenceData } from '../reference/load.js';
import type { TradingMarket } from './markets.js';
import type { BookView } from './writer.js';

export const DAY_MS = 86_400_000;

/** `[symbol, bid, bidVolume, ask, askVolume, change, changePercent, last, volume, high, low]` */
export type V3Ticker = [
  string,
  number,
  number,
  number,
  number,
  number,
  number,
  number,
  number,
  number,
  number,
];

/** What public market data shows of one market (see market-stats/market-stats.ts, which keeps it). */
export interface MarketSummary {
  readonly market: TradingMarket;
  readonly bid: bigint | null;
  readonly bidVolume: bigint;
  readonly ask: bigint | null;
  readonly askVolume: bigint;
  /** Last trade price ever, null before the first trade. */
  readonly last: bigint | null;
  /** Trades of the last 24 hours, undefined when there were none. */
  readonly day: WindowStats | undefined;
}

/** 24 h change of the price in percent, 2 decimals (0 without trades in the window). */
export function changePercent(day: WindowStats | undefined): number {
  if (!day || day.open === 0n) return 0;
  return Math.round(Number(((day.last - day.open) * 1_000_000n) / day.open) / 100) / 100;
}

export function v3Ticker(s: MarketSummary): V3Ticker {
  const price = (p: bigint | null) => (p === null ? 0 : amountToNumber(p, s.market.file.quote_precision));
  const amount = (a: bigint) => amountToNumber(a, s.market.file.base_precision);
  const day = s.day;
  return [
    s.market.id,
    price(s.bid),
    amount(s.bidVolume),
    price(s.ask),
    amount(s.askVolume),
    day ? price(day.last - day.open) : 0,
    changePercent(day),
    price(s.last),
    day ? amount(day.volume) : 0,
    day ? price(day.high) : price(s.last),
    day ? price(day.low) : price(s.last),
  ];
}

/** Peatio ticker: strings, `at` in seconds. */
export function v2Ticker(s: MarketSummary, now: number) {
  const price = (p: bigint | null) => s.market.formatPrice(p ?? 0n);
  const day = s.day;
  return {
    at: Math.floor(now / 1000),
    ticker: {
      buy: price(s.bid),
      sell: price(s.ask),
      low: price(day ? day.low : s.last),
      high: price(day ? day.high : s.last),
      last: price(s.last),
      vol: s.market.formatAmount(day?.volume ?? 0n),
      amount: s.market.formatTotal(day?.funds ?? 0n),
    },
  };
}

/**
 * The whole book as one array `[price, volume, orders]`, bids (volume > 0) best first, then asks
 * (volume < 0) best first. Prices are grouped to `display_precision` decimals when the market's price
 * precision is finer: bids rounded down, asks up, so a group never looks better than its orders.
 */
export function v3Book(depth: BookView, market: TradingMarket): [number, number, number][] {
  const { quote_precision: qp, base_precision: bp, display_precision: dp } = market.file;
  const step = qp > dp ? 10n ** BigInt(qp - dp) : 1n;
  const group = (entries: readonly (readonly [bigint, bigint, number])[], up: boolean, sign: number) => {
    const out: [number, number, number][] = [];
    let current: [bigint, bigint, number] | undefined;
    for (const [price, volume, count] of entries) {
      const grouped = up ? ((price + step - 1n) / step) * step : (price / step) * step;
      if (current && current[0] === grouped) {
        current[1] += volume;
        current[2] += count;
      } else {
        if (current)
          out.push([amountToNumber(current[0], qp), sign * amountToNumber(current[1], bp), current[2]]);
        current = [grouped, volume, count];
      }
    }
    if (current)
      out.push([amountToNumber(current[0], qp), sign * amountToNumber(current[1], bp), current[2]]);
    return out;
  };
  return [...group(depth.bids, false, 1), ...group(depth.asks, true, -1)];
}

/**
 * Exchange rates from the last trade prices: a direct market (either direction) first, else the
 * shortest chain of markets with a last price (breadth first, up to 3 markets), else the reference rate.
 */
export function tradedRates(
  reference: ReferenceData,
  lasts: ReadonlyMap<string, bigint>,
  markets: Iterable<TradingMarket>,
): ExchangeRate[] {
  const edges = new Map<string, { to: string; rate: number }[]>();
  const add = (from: string, to: string, rate: number) => {
    const list = edges.get(from) ?? [];
    list.push({ to, rate });
    edges.set(from, list);
  };
  for (const market of markets) {
    const last = lasts.get(market.id);
    if (last === undefined || last <= 0n) continue;
    const price = amountToNumber(last, market.file.quote_precision);
    add(market.base, market.quote, price);
    add(market.quote, market.base, 1 / price);
  }
  const rateOf = (from: string, to: string): number | undefined => {
    if (from === to) return 1;
    let frontier = [{ at: from, rate: 1 }];
    const seen = new Set([from]);
    for (let hops = 0; hops < 3 && frontier.length > 0; hops += 1) {
      const next: { at: string; rate: number }[] = [];
      for (const node of frontier) {
        for (const edge of edges.get(node.at) ?? []) {
          if (edge.to === to) return node.rate * edge.rate;
          if (!seen.has(edge.to)) {
            seen.add(edge.to);
            next.push({ at: edge.to, rate: node.rate * edge.rate });
          }
        }
      }
      frontier = next;
    }
    return undefined;
  };
  return reference.rates.map((fallback) => {
    const rate: ExchangeRate = { currency: fallback.currency };
    for (const [target, value] of Object.entries(fallback)) {
      if (target === 'currency') continue;
      const traded = rateOf(fallback.currency, target);
      rate[target] = traded === undefined ? value : Number(traded.toFixed(10));
    }
    return rate;
  });
}
