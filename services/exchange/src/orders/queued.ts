import type { DeferredNonce } from '../http/request-context.js';
import type { OrderOutcome, OrderRequest } from './requests.js';

/** A request waiting in a market writer's queue, or in a batch, until its batch commits or fails. */
export interface Pending {
  readonly request: OrderRequest;
  readonly nonce: DeferredNonce | undefined;
  readonly resolve: (outcome: OrderOutcome) => void;
  readonly reject: (error: unknown) => void;
  /** Times a batch holding this request failed. */
  failedBatches: number;
}

/** Largest number of requests committed in one statement. */
export const MAX_BATCH = 256;
