import { integer } from '../settings/parse.js';

/** Durable snapshots of the order books, so a restart replays only the commands after the newest. */
export interface BookSnapshotConfig {
  /**
   * Committed commands of a market between two snapshots of its book (also the in-memory checkpoint
   * interval); 0 turns snapshots off: none written, none read, every start replays the whole log.
   * @default 50000 (`BOOK_SNAPSHOT_EVERY`, 0..10000000)
   */
  readonly every: number;
  /** Snapshots kept per market, the newest; older ones are the fallback. @default 2 (`BOOK_SNAPSHOT_KEEP`, 2..10) */
  readonly keep: number;
  /**
   * Every this many ms, a market whose writer is idle and has committed commands since its last
   * snapshot gets one; 0: only every `every` commands (and at graceful shutdown).
   * @default 60000 (`BOOK_SNAPSHOT_INTERVAL_MS`, 0..86400000)
   */
  readonly intervalMs: number;
  /** Test-only fail point, see src/snapshots/book-snapshots.ts. @default none (`EXCHANGE_FAILPOINT`) */
  readonly failpoint: string | undefined;
}

export function bookSnapshotConfig(env: NodeJS.ProcessEnv): BookSnapshotConfig {
  return Object.freeze({
    every: integer(env, 'BOOK_SNAPSHOT_EVERY', 50_000, 0, 10_000_000),
    keep: integer(env, 'BOOK_SNAPSHOT_KEEP', 2, 2, 10),
    intervalMs: integer(env, 'BOOK_SNAPSHOT_INTERVAL_MS', 60_000, 0, 86_400_000),
    failpoint: env.EXCHANGE_FAILPOINT || undefined,
  });
}
