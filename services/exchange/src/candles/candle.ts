import { amountToNumber } from '../money/decimal.js';
import type { TradingMarket } from '../orders/markets.js';
import { candleStart, type Resolution } from './resolutions.js';

/** One candle: the trades of one interval (prices in quote_precision units, volume in base units). */
export interface Candle {
  /** The interval's start, Unix seconds. */
  readonly time: number;
  readonly open: bigint;
  readonly high: bigint;
  readonly low: bigint;
  readonly close: bigint;
  readonly volume: bigint;
  /** The largest trade id in it: trades of a market are numbered in commit order. */
  readonly lastTradeId: number;
}

/** What a candle needs of a trade. */
export interface CandleTrade {
  readonly id: number;
  readonly price: bigint;
  readonly amount: bigint;
  readonly createdAt: number;
}

/**
 * The candle after `trade` (pure): the same interval's candle with the trade added, or a new candle
 * when the trade opens a later interval. A trade of an earlier interval than `candle`'s (a clock that
 * went back) or one already counted (its id not above the candle's last) leaves it as it is.
 */
export function withTrade(resolution: Resolution, candle: Candle | undefined, trade: CandleTrade): Candle {
  const time = candleStart(resolution, trade.createdAt);
  if (!candle || time > candle.time)
    return {
      time,
      open: trade.price,
      high: trade.price,
      low: trade.price,
      close: trade.price,
      volume: trade.amount,
      lastTradeId: trade.id,
    };
  if (time < candle.time || trade.id <= candle.lastTradeId) return candle;
  return {
    time,
    open: candle.open,
    high: trade.price > candle.high ? trade.price : candle.high,
    low: trade.price < candle.low ? trade.price : candle.low,
    close: trade.price,
    volume: candle.volume + trade.amount,
    lastTradeId: trade.id,
  };
}

/** A candle row as the API shows it: `[time, open, high, low, close, volume]`, JSON numbers. */
export type WireCandle = [
  time: number,
  open: number,
  high: number,
  low: number,
  close: number,
  volume: number,
];

export function wireCandle(market: TradingMarket, candle: Candle): WireCandle {
  const { quote_precision: qp, base_precision: bp } = market.file;
  return [
    candle.time,
    amountToNumber(candle.open, qp),
    amountToNumber(candle.high, qp),
    amountToNumber(candle.low, qp),
    amountToNumber(candle.close, qp),
    amountToNumber(candle.volume, bp),
  ];
}
