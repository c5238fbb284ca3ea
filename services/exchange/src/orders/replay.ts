import type { Sql } from '../db/database.js';
import { MatchingEngine } from '../matching/engine.js';
import type { Command } from '../matching/types.js';
import type { TradingMarket } from './markets.js';
import { commandLog } from './store.js';

/** Rows of the command log read at a time on replay. */
const REPLAY_CHUNK = 5_000;

/**
 * Replays a market's stored command log after `seq` onto `engine` (an empty book by default) and
 * returns it with the sequence number of the last command applied; the commands applied are added
 * to `applied` when given.
 */
export async function replayLog(
  db: Sql,
  market: TradingMarket,
  engine = new MatchingEngine(market.spec),
  seq = 0,
  applied?: Command[],
): Promise<{ engine: MatchingEngine; seq: number }> {
  for (;;) {
    const chunk = await commandLog(db, market.id, seq, REPLAY_CHUNK);
    for (const entry of chunk) {
      const result = engine.apply(entry.command);
      if (!result.ok) {
        throw new Error(
          `market ${market.id}: stored command ${entry.seq} is refused on replay (${result.code})`,
        );
      }
      applied?.push(entry.command);
      seq = entry.seq;
    }
    // A chunk holds up to REPLAY_CHUNK batches of commands: the log ends at the first empty one.
    if (chunk.length === 0) break;
  }
  return { engine, seq };
}
