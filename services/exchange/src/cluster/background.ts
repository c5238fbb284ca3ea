/**
 * Background work that must run on one node of a cluster at a time (deposit scanning and withdrawal
 * sending, fiat payout dispatch, transfer-code expiry, the periodic ledger reconciliation): each loop
 * asks `mayRun(job)` at the start of a round. In one process every job always runs; in a cluster a job runs on the node holding its
 * lease in `cluster_jobs` (src/cluster/jobs.ts, renewed every tick by the database's clock, taken
 * over by another node when it expires).
 */
export type BackgroundJob = 'wallet' | 'fiat-payouts' | 'code-expiry' | 'ledger-reconcile';

export const BACKGROUND_JOBS: readonly BackgroundJob[] = [
  'wallet',
  'fiat-payouts',
  'code-expiry',
  'ledger-reconcile',
];

class BackgroundGate {
  private decide: ((job: BackgroundJob) => boolean) | undefined;

  /** Whether this process runs `job`'s next round. */
  mayRun(job: BackgroundJob): boolean {
    return this.decide ? this.decide(job) : true;
  }

  /** A cluster node decides from now on (undefined: back to one process). */
  use(decide: ((job: BackgroundJob) => boolean) | undefined): void {
    this.decide = decide;
  }
}

/** The process's gate (one per process, as the background loops are). */
export const background = new BackgroundGate();
