import type { Sql } from '../db/database.js';
import type { Candle } from './candle.js';
import { RESOLUTIONS, type Resolution } from './resolutions.js';

/**
 * The candles of a market from its stored trades (the system of record, the same on every node and
 * after a restart): every interval of `resolution` starting from `first` to `last` (Unix seconds,
 * interval starts) that holds a trade, oldest first, at most `limit`. Open and close are the first
 * and last trade by id, as the tickers count them (market-stats/rolling-day.ts). The index
 * `trades_market_time` (003_orders.sql) finds the range.
 */
export async function storedCandles(
  db: Sql,
  market: string,
  resolution: Resolution,
  first: number,
  last: number,
  limit: number,
): Promise<Candle[]> {
  const length = RESOLUTIONS[resolution];
  const { rows } = await db.query<{
    time: string;
    open: string;
    high: string;
    low: string;
    close: string;
    volume: string;
    last_id: string;
  }>(
    `SELECT (created_at / $4::bigint * $5::bigint)::text AS time,
            (array_agg(price ORDER BY id))[1]::text AS open, max(price)::text AS high,
            min(price)::text AS low, (array_agg(price ORDER BY id DESC))[1]::text AS close,
            sum(amount)::text AS volume, max(id)::text AS last_id
       FROM trades
      WHERE market = $1 AND created_at >= $2::bigint AND created_at < $3::bigint
      GROUP BY created_at / $4::bigint ORDER BY created_at / $4::bigint LIMIT $6`,
    [market, first * 1000, (last + length) * 1000, length * 1000, length, limit],
  );
  return rows.map((row) => ({
    time: Number(row.time),
    open: BigInt(row.open),
    high: BigInt(row.high),
    low: BigInt(row.low),
    close: BigInt(row.close),
    volume: BigInt(row.volume),
    lastTradeId: Number(row.last_id),
  }));
}
