import { HistogramCounts } from '@platform/observability/plain-histogram';
import { MAX_BATCH } from './queued.js';

/** Seconds from a batch's statement sent to its commit answered (queueing in the pipeline included). */
const COMMIT_SECONDS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];
/** Requests per committed batch: powers of two up to the largest batch. */
const BATCH_SIZES = [1, 2, 4, 8, 16, 32, 64, 128, MAX_BATCH];
/** Seconds the engine and the batch's checks take per request (microseconds to a millisecond). */
const ENGINE_SECONDS = [1e-6, 2.5e-6, 5e-6, 1e-5, 2.5e-5, 5e-5, 1e-4, 2.5e-4, 5e-4, 1e-3, 1e-2];

/**
 * What one market's writer counts for the metrics (src/metrics/exchange-metrics.ts reads it at
 * scrape time): plain numbers, so a batch pays a few additions and two clock reads.
 */
export class WriterStats {
  /** Committed statements and the requests they answered (group commit: requests >= batches). */
  batches = 0;
  requests = 0;
  /** Statements that failed (a conflict, a failed batch before them in the chain, a database error). */
  failed = 0;
  readonly commitSeconds = new HistogramCounts(COMMIT_SECONDS);
  readonly batchSize = new HistogramCounts(BATCH_SIZES);
  /** A batch's compute time divided among its requests, observed once per request. */
  readonly engineSecondsPerRequest = new HistogramCounts(ENGINE_SECONDS);

  committed(requests: number, seconds: number): void {
    this.batches += 1;
    this.requests += requests;
    this.batchSize.observe(requests);
    this.commitSeconds.observe(seconds);
  }

  computed(requests: number, seconds: number): void {
    if (requests > 0) this.engineSecondsPerRequest.observe(seconds / requests, requests);
  }
}
