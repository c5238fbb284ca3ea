import type { CommittedBatch } from '../orders/commits.js';
import type { BatchFrames } from './market-frames.js';

/** What a batch holds for the private channels, kept to make any account's frames of it later. */
export type PrivateBatch = Pick<
  CommittedBatch,
  'market' | 'seq' | 'trades' | 'orders' | 'balances' | 'feedMissing'
>;

export interface JournalEntry {
  readonly frames: BatchFrames;
  readonly batch: PrivateBatch;
  /** Bytes the entry keeps (its frames, and an estimate of its private part). */
  readonly bytes: number;
}

export interface JournalLimits {
  /** Batches kept per market at least (unless `maxBytes` is reached first). */
  readonly frames: number;
  /** Bytes kept per market at most. */
  readonly maxBytes: number;
}

/** Rough sizes of the private part's objects (an order row, a balance, a trade) in bytes. */
const ORDER_BYTES = 400;
const BALANCE_BYTES = 120;
const TRADE_BYTES = 300;

/**
 * The last frames of one market, batch by batch, so that a client that lost its connection can
 * resume from the last sequence number it saw (`from_seq`) and receive exactly the frames it
 * missed. Bounded: at most `limits.frames` batches and `limits.maxBytes` bytes; the oldest go first.
 * It covers every batch after `coveredFrom` (the sequence number the hub started at, then the last
 * one evicted): a resume from an older number cannot be served.
 */
export class FrameJournal {
  private entries: JournalEntry[] = [];
  private first = 0;
  private bytes = 0;

  constructor(
    private readonly limits: JournalLimits,
    /** Sequence number after which every batch is kept (the books' number when the journal starts). */
    private coveredFrom: number,
  ) {}

  get size(): number {
    return this.entries.length - this.first;
  }

  get heldBytes(): number {
    return this.bytes;
  }

  push(frames: BatchFrames, batch: CommittedBatch): void {
    const kept: PrivateBatch = {
      market: batch.market,
      seq: batch.seq,
      trades: batch.trades,
      orders: batch.orders,
      balances: batch.balances,
      ...(batch.feedMissing ? { feedMissing: true as const } : {}),
    };
    const bytes =
      frames.book.length +
      frames.l3.length +
      (frames.trades?.length ?? 0) +
      kept.orders.length * ORDER_BYTES +
      kept.balances.size * BALANCE_BYTES +
      kept.trades.length * TRADE_BYTES;
    this.entries.push({ frames, batch: kept, bytes });
    this.bytes += bytes;
    while (this.size > this.limits.frames || (this.bytes > this.limits.maxBytes && this.size > 1)) {
      const gone = this.entries[this.first]!;
      this.first += 1;
      this.bytes -= gone.bytes;
      this.coveredFrom = gone.frames.seq;
    }
    // Compacted now and then, so that evicting stays O(1) per batch on average.
    if (this.first > 1024 && this.first * 2 > this.entries.length) {
      this.entries = this.entries.slice(this.first);
      this.first = 0;
    }
  }

  /** Whether every frame after `seq` is still here (`seq` not older than the oldest kept). */
  covers(seq: number): boolean {
    return seq >= this.coveredFrom;
  }

  /** The entries of batches after `seq`, in order (call when `covers(seq)`). */
  after(seq: number): JournalEntry[] {
    let from = this.entries.length;
    while (from > this.first && this.entries[from - 1]!.frames.seq > seq) from -= 1;
    return this.entries.slice(from);
  }
}
