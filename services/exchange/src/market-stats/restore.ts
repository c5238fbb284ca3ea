import type { Sql } from '../db/database.js';
import type { WindowTrade } from './rolling-day.js';

/** Rows read per statement while restoring (keyset paging by id keeps each read small). */
const CHUNK = 20_000;

/**
 * The stored trades of one market with `created_at >= since`, in id order, by chunks (the index
 * `trades_market_time` finds the window; 003_orders.sql).
 */
export async function* storedTradesSince(
  db: Sql,
  market: string,
  since: number,
): AsyncGenerator<WindowTrade> {
  let after = 0;
  for (;;) {
    const { rows } = await db.query<{
      id: string;
      price: string;
      amount: string;
      quote: string;
      created_at: string;
    }>(
      `SELECT id::text, price::text, amount::text, quote::text, created_at::text FROM trades
        WHERE market = $1 AND created_at >= $2 AND id > $3 ORDER BY id LIMIT $4`,
      [market, since, after, CHUNK],
    );
    for (const row of rows) {
      yield {
        id: Number(row.id),
        createdAt: Number(row.created_at),
        price: BigInt(row.price),
        amount: BigInt(row.amount),
        quote: BigInt(row.quote),
      };
    }
    if (rows.length < CHUNK) return;
    after = Number(rows[rows.length - 1]!.id);
  }
}
