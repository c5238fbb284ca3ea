import type { Database } from '../../src/db/database.js';
import type { MarketSummary } from '../../src/orders/market-data.js';
import type { TradingMarket } from '../../src/orders/markets.js';
import { dayStats } from '../../src/orders/store.js';

/**
 * Market summaries computed from the stored rows alone, the way the routes did before market data
 * moved to memory: 24 h statistics by the SQL aggregation `dayStats`, top of book from the resting
 * limit orders, last price from the newest trade. Tests compare the routes' bytes with these.
 */
export async function storedSummaries(
  db: Database,
  markets: readonly TradingMarket[],
  now: number,
): Promise<MarketSummary[]> {
  const days = await dayStats(db, now - 86_400_000);
  const { rows: levels } = await db.query<{
    market: string;
    side: 'buy' | 'sell';
    price: string;
    volume: string;
  }>(
    `SELECT market, side, price::text, sum(amount - executed)::text AS volume FROM orders
      WHERE state = 'wait' AND kind = 'limit' GROUP BY market, side, price`,
  );
  const { rows: lasts } = await db.query<{ market: string; price: string }>(
    'SELECT DISTINCT ON (market) market, price::text FROM trades ORDER BY market, id DESC',
  );
  return markets.map((market) => {
    const mine = levels.filter((l) => l.market === market.id);
    const best = (side: 'buy' | 'sell') =>
      mine
        .filter((l) => l.side === side)
        .map((l) => [BigInt(l.price), BigInt(l.volume)] as const)
        .sort(([a], [b]) => (a === b ? 0 : a < b === (side === 'buy') ? 1 : -1))[0];
    const bid = best('buy');
    const ask = best('sell');
    const last = lasts.find((l) => l.market === market.id);
    return {
      market,
      bid: bid?.[0] ?? null,
      bidVolume: bid?.[1] ?? 0n,
      ask: ask?.[0] ?? null,
      askVolume: ask?.[1] ?? 0n,
      last: last ? BigInt(last.price) : null,
      day: days.get(market.id),
    };
  });
}
