import { sqlState } from '../db/database.js';
import type { Command } from '../matching/types.js';
import type { Pending } from './queued.js';
import type { TradeRow } from './store.js';

/**
 * Failures after which a request is computed again: deadlock and serialisation failures, and SVC01
 * (the balances, nonces or earlier batch its batch was computed on changed; see writeBatch).
 */
const RETRYABLE = new Set(['40P01', '40001', 'SVC01']);
/** Failed batches after which a request's caller gets the error. */
const ATTEMPTS = 8;

/** A batch that failed, with the error its statement (or its computation) failed with. */
export interface FailedBatch {
  readonly batch: readonly Pending[];
  readonly error: unknown;
  /** The command sequence number after the batch: logged under it with its commands, it committed after all. */
  readonly seq: number;
  /** The command sequence number before the batch (`seq` less its commands). */
  readonly prevSeq: number;
  /** Trades the batch made, published to followers if a rebuild finds that it committed. */
  readonly trades: readonly TradeRow[];
  /** The commands it sent (none when it failed before it was sent): what the log holds if it committed. */
  readonly commands: readonly Command[];
}

/**
 * Without an SQLSTATE the database may have committed the statement before the connection failed:
 * the engine must then be rebuilt from what is stored rather than rolled back.
 */
export function outcomeUnknown(error: unknown): boolean {
  return sqlState(error) === undefined;
}

/**
 * The requests of failed batches to compute again, in arrival order, when the failure may pass (a
 * conflict or deadlock) and they have not failed too often; the others' callers get the error.
 */
export function retryOrReject(failures: readonly FailedBatch[]): Pending[] {
  const again: Pending[] = [];
  for (const { batch, error } of failures) {
    const code = sqlState(error);
    for (const pending of batch) {
      pending.failedBatches += 1;
      if (code && RETRYABLE.has(code) && pending.failedBatches < ATTEMPTS) again.push(pending);
      else pending.reject(error);
    }
  }
  return again;
}
