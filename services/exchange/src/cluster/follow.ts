import type { Sql } from '../db/database.js';
import type { Command } from '../matching/types.js';
import { type BatchFeed, decodeBatchFeed } from '../orders/batch-feed.js';
import { decodeCommand } from '../orders/store.js';

/** One committed batch of a market's command log: its commands, under the sequence number of the last. */
export interface LoggedBatch {
  readonly market: string;
  readonly seq: number;
  readonly commands: Command[];
  /** What the batch changed for the live feed, as its owner logged it (orders/batch-feed.ts). */
  readonly feed?: BatchFeed;
}

/** Rows of the log read per market in one round. */
const FOLLOW_CHUNK = 500;

/**
 * The committed batches of several markets after the sequence number each copy has reached, one
 * statement for all (a keyed range scan per market), in log order per market.
 */
export async function logTails(
  db: Sql,
  after: ReadonlyMap<string, number>,
): Promise<Map<string, LoggedBatch[]>> {
  const tails = new Map<string, LoggedBatch[]>();
  if (after.size === 0) return tails;
  const { rows } = await db.query<{ market: string; seq: string; command: unknown; feed: unknown }>(
    `SELECT c.market, c.seq::text, c.command, c.feed
       FROM unnest($1::text[], $2::bigint[]) AS w(market, seq)
       CROSS JOIN LATERAL (
         SELECT e.market, e.seq, e.command, e.feed FROM engine_commands e
          WHERE e.market = w.market AND e.seq > w.seq ORDER BY e.seq LIMIT $3
       ) c
      ORDER BY c.market, c.seq`,
    [[...after.keys()], [...after.values()], FOLLOW_CHUNK],
  );
  for (const row of rows) {
    const json = typeof row.command === 'string' ? JSON.parse(row.command) : row.command;
    const commands = (Array.isArray(json) ? json : [json]).map((c: Record<string, unknown>) =>
      decodeCommand(c),
    );
    const list = tails.get(row.market) ?? [];
    tails.set(row.market, list);
    const feed = decodeBatchFeed(row.feed);
    list.push({ market: row.market, seq: Number(row.seq), commands, ...(feed ? { feed } : {}) });
  }
  return tails;
}

/** The whole committed tail of one market after `seq` (a takeover's catch-up). */
export async function wholeTail(db: Sql, market: string, seq: number): Promise<LoggedBatch[]> {
  const all: LoggedBatch[] = [];
  for (let from = seq; ; ) {
    const chunk = (await logTails(db, new Map([[market, from]]))).get(market) ?? [];
    if (chunk.length === 0) return all;
    all.push(...chunk);
    from = chunk[chunk.length - 1]!.seq;
  }
}
