import type { RequestResult } from './batch-compute.js';
import type { BatchWork } from './batch-work.js';
import type { BookView } from './book-view.js';
import type { Checkpoint } from './checkpoints.js';
import type { LevelChanges } from './level-book.js';
import type { Pending } from './queued.js';
import type { BatchWritten } from './store.js';

/** A batch sent and not settled yet. */
export interface Flight {
  readonly batch: readonly Pending[];
  readonly results: readonly RequestResult[];
  readonly work: BatchWork;
  /** Available funds the batch moves, by balance key (BatchInputs.sent). */
  readonly moves: ReadonlyMap<string, bigint>;
  /** Balances the batch checked and API keys whose nonces it records. */
  readonly checked: readonly string[];
  readonly keyIds: ReadonlySet<number>;
  /** The book as the batch leaves it, when it was read lately: the public view once it commits. */
  readonly view: BookView | undefined;
  /** The book levels the batch changed, when batches are followed (CommittedBatch.levels). */
  readonly levels: LevelChanges | undefined;
  readonly lastPrice: bigint | null;
  /** The command sequence number after the batch. */
  readonly seq: number;
  /** The engine as the batch leaves it, when a checkpoint is due: the checkpoint once it commits. */
  readonly checkpoint: Checkpoint | undefined;
  /** `performance.now()` when the statement was sent (the commit latency's start). */
  readonly sentAt: number;
}

/**
 * Answers the callers of a committed batch: refusals as computed, placed or cancelled orders as
 * stored (rows the statement returned, or created by the batch). Returns every order row it knows.
 */
export function answerLanded(
  flight: Flight,
  written: BatchWritten,
): Map<number, BatchWritten['orders'][number]> {
  const rows = new Map(written.orders.map((row) => [row.id, row]));
  for (const row of flight.work.created.values()) rows.set(row.id, row);
  for (const [index, pending] of flight.batch.entries()) {
    if (pending.nonce) pending.nonce.consumed = true;
    const result = flight.results[index]!;
    if (typeof result !== 'number') {
      pending.resolve(result);
      continue;
    }
    const order = rows.get(result);
    if (order) pending.resolve({ ok: true, order });
    else pending.reject(new Error(`order ${result} missing after its batch`));
  }
  return rows;
}
