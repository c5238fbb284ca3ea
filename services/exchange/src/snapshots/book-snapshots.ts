import type { Database } from '../db/database.js';
import { MatchingEngine } from '../matching/engine.js';
import type { Command } from '../matching/types.js';
import type { Checkpoint } from '../orders/checkpoints.js';
import type { TradingMarket } from '../orders/markets.js';
import { replayLog } from '../orders/replay.js';
import { CorruptSnapshot, decodeSnapshot, encodeSnapshot } from './codec.js';
import { batchEndsAt, saveSnapshot, snapshotBytes, snapshotSeqs } from './store.js';

export interface SnapshotSettings {
  /** Committed commands of a market between two durable snapshots of its engine; 0: none written or read. */
  readonly every: number;
  /** Snapshots kept per market (the newest; older ones are the fallback when it is corrupt). */
  readonly keep: number;
  /**
   * Every this many ms, an idle market with commands committed since its last snapshot gets one
   * (OrderService); 0 or absent: none on a timer. Graceful shutdown takes one either way.
   */
  readonly intervalMs?: number;
  /**
   * Test-only fail point (`EXCHANGE_FAILPOINT`): `book-snapshot-mid-write` kills the process with
   * SIGKILL inside the transaction writing a snapshot, after the row is written and before it
   * commits, when an older snapshot of the market is stored (so a previous one must be used).
   */
  readonly failpoint?: string | undefined;
}

/** An engine rebuilt from storage; `from`: the snapshot it started from and the commands applied since. */
export interface Restored {
  readonly engine: MatchingEngine;
  readonly seq: number;
  readonly from?: { readonly checkpoint: Checkpoint; readonly since: Command[] };
}

/** What snapshots did, for the service's log. */
export type SnapshotEvent =
  | {
      readonly type: 'restored';
      readonly market: string;
      /** The snapshot's sequence number, or null for a replay of the whole log. */
      readonly from: number | null;
      readonly seq: number;
      readonly ms: number;
    }
  | { readonly type: 'skipped'; readonly market: string; readonly seq: number; readonly error: unknown }
  | { readonly type: 'written'; readonly market: string; readonly seq: number; readonly bytes: number }
  | { readonly type: 'write_failed'; readonly market: string; readonly seq: number; readonly error: unknown };

/**
 * Durable snapshots of the markets' engines. Writing: the order writer offers each in-memory
 * checkpoint once the batch it was taken with has committed (checkpoints.ts), and it is encoded
 * and stored later, one write at a time per market, on a pool connection (never in the order batch
 * statement); a newer checkpoint offered while one is written replaces any still waiting. Reading:
 * the newest snapshot that decodes and sits on a logged batch boundary, then the commands after it;
 * a corrupt one is reported and the one before it is tried, down to a replay of the whole log.
 */
export class BookSnapshots {
  private readonly waiting = new Map<string, Checkpoint>();
  private readonly writing = new Map<string, Promise<void>>();
  /** How the last start-up of each market restored its engine (tests, the benchmark). */
  readonly restored = new Map<string, { readonly from: number | null; readonly seq: number }>();

  constructor(
    private readonly db: Database,
    readonly settings: SnapshotSettings,
    private readonly report: (event: SnapshotEvent) => void = () => {},
  ) {}

  /** Queues a committed checkpoint of `market` to be stored. */
  offer(market: string, checkpoint: Checkpoint): void {
    if (this.settings.every === 0) return;
    this.waiting.set(market, checkpoint);
    if (!this.writing.has(market)) this.writing.set(market, this.write(market));
  }

  /** Resolves once every offered snapshot has been stored (or failed). */
  async flushed(): Promise<void> {
    while (this.writing.size > 0) await Promise.all(this.writing.values());
  }

  private async write(market: string): Promise<void> {
    try {
      for (;;) {
        const checkpoint = this.waiting.get(market);
        if (!checkpoint) break;
        this.waiting.delete(market);
        // After the batch's callers and followers have been answered (landed() offers it).
        await new Promise<void>((resolve) => setImmediate(resolve));
        try {
          const bytes = encodeSnapshot(checkpoint.snapshot);
          await saveSnapshot(this.db, market, checkpoint.seq, bytes, this.settings.keep, async (tx) => {
            if (this.settings.failpoint !== 'book-snapshot-mid-write') return;
            const { rows } = await tx.query<{ n: number }>(
              'SELECT count(*)::int AS n FROM book_snapshots WHERE market = $1 AND seq < $2',
              [market, checkpoint.seq],
            );
            if ((rows[0]?.n ?? 0) > 0) process.kill(process.pid, 'SIGKILL');
          });
          this.report({ type: 'written', market, seq: checkpoint.seq, bytes: bytes.length });
        } catch (error) {
          // A snapshot is an optimisation: order entry goes on, the next checkpoint tries again.
          this.report({ type: 'write_failed', market, seq: checkpoint.seq, error });
        }
      }
    } finally {
      this.writing.delete(market);
    }
  }

  /**
   * The engine of `market` as its stored log leaves it, with the sequence number of its last
   * command: from the newest valid snapshot and the commands after it, else from the whole log.
   */
  async restore(market: TradingMarket): Promise<Restored> {
    const started = performance.now();
    const done = (result: Restored, from: number | null) => {
      this.restored.set(market.id, { from, seq: result.seq });
      this.report({
        type: 'restored',
        market: market.id,
        from,
        seq: result.seq,
        ms: performance.now() - started,
      });
      return result;
    };
    const stored = this.settings.every > 0 ? await snapshotSeqs(this.db, market.id) : [];
    for (const seq of stored) {
      try {
        const bytes = await snapshotBytes(this.db, market.id, seq);
        if (!bytes) continue; // deleted since it was listed
        if (!(await batchEndsAt(this.db, market.id, seq))) {
          throw new CorruptSnapshot(`seq ${seq} is not the end of a logged batch`);
        }
        const snapshot = decodeSnapshot(bytes);
        const since: Command[] = [];
        const replayed = await replayLog(
          this.db,
          market,
          MatchingEngine.restore(market.spec, snapshot),
          seq,
          since,
        );
        return done({ ...replayed, from: { checkpoint: { snapshot, seq }, since } }, seq);
      } catch (error) {
        this.report({ type: 'skipped', market: market.id, seq, error });
      }
    }
    return done(await replayLog(this.db, market), null);
  }
}
