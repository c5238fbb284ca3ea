import { MatchingEngine } from '../matching/engine.js';
import type { EngineSnapshot } from '../matching/snapshot.js';
import type { Command, MarketSpec } from '../matching/types.js';

/** Committed commands between two in-memory checkpoints of the engine (see Checkpoints.rollBack). */
export const CHECKPOINT_EVERY = 50_000;

/** The engine as a batch left it, and the command sequence number after that batch. */
export interface Checkpoint {
  readonly snapshot: EngineSnapshot;
  readonly seq: number;
}

/**
 * In-memory checkpoints of one market's engine, so that going back to the committed state after a
 * failed batch costs a restore and a replay of the commands committed since (at most `every`), not a
 * replay of the whole stored log. A checkpoint is taken with a batch when it is due and becomes the
 * one to go back to only once that batch commits.
 */
export class Checkpoints {
  private checkpoint: Checkpoint;
  /** Commands committed since the last committed checkpoint, in order. */
  private committedSince: Command[] = [];
  /** Commands computed (committed or in flight) since the last checkpoint taken. */
  private sinceTaken = 0;

  constructor(
    private readonly spec: MarketSpec,
    private readonly every: number,
    engine: MatchingEngine,
    seq: number,
  ) {
    this.checkpoint = { snapshot: engine.snapshot(), seq };
  }

  /**
   * Starts over from an engine rebuilt from storage; `from` is the snapshot it was restored from and
   * the commands applied since, when it was (saves taking a snapshot of a large book again).
   */
  reset(engine: MatchingEngine, seq: number, from?: { checkpoint: Checkpoint; since: Command[] }): void {
    if (from && from.checkpoint.seq + from.since.length === seq) {
      this.checkpoint = from.checkpoint;
      this.committedSince = from.since;
    } else {
      this.checkpoint = { snapshot: engine.snapshot(), seq };
      this.committedSince = [];
    }
    this.sinceTaken = this.committedSince.length;
  }

  /** Counts a computed batch of `count` commands; the checkpoint to send with it when one is due. */
  taken(engine: MatchingEngine, count: number, seq: number): Checkpoint | undefined {
    this.sinceTaken += count;
    if (this.sinceTaken < this.every) return undefined;
    this.sinceTaken = 0;
    return { snapshot: engine.snapshot(), seq };
  }

  /** Takes `checkpoint` (the committed engine, nothing in flight) as the one to go back to. */
  adopt(checkpoint: Checkpoint): void {
    this.checkpoint = checkpoint;
    this.committedSince = [];
    this.sinceTaken = 0;
  }

  /** A batch committed, with the checkpoint taken with it if any. */
  committed(commands: readonly Command[], checkpoint: Checkpoint | undefined): void {
    if (checkpoint) {
      this.checkpoint = checkpoint;
      this.committedSince = [];
    } else {
      this.committedSince.push(...commands);
    }
  }

  /** The command sequence number of the committed state: the last checkpoint's, and the commands since. */
  get committedSeq(): number {
    return this.checkpoint.seq + this.committedSince.length;
  }

  /**
   * The engine in its committed state, built apart without the database: the last checkpoint, then
   * the commands committed since. Replay is deterministic, so this is the engine the stored log would
   * rebuild at `committedSeq`.
   */
  committedEngine(): MatchingEngine {
    const engine = MatchingEngine.restore(this.spec, this.checkpoint.snapshot);
    for (const command of this.committedSince) {
      const result = engine.apply(command);
      if (!result.ok) throw new Error(`market ${this.spec.id}: a committed command is refused on replay`);
    }
    return engine;
  }

  /** Goes back to the committed state (`committedEngine`): uncommitted commands computed since are forgotten. */
  rollBack(): { engine: MatchingEngine; seq: number } {
    const engine = this.committedEngine();
    this.sinceTaken = this.committedSince.length;
    return { engine, seq: this.committedSeq };
  }
}
