/**
 * Background work that must run on one node of a cluster at a time (deposit scanning and withdrawal
 * sending, fiat payout dispatch, fiat deposit-link expiry, transfer-code expiry, the periodic ledger
 * reconciliation): each loop asks `mayRun(job)` at the start of a round, and so does every immediate
 * round (the payout dispatcher's `kick()` after a request is queued). In one process every job always
 * runs; in a cluster a job runs on the node holding its lease in `cluster_jobs` (src/cluster/jobs.ts,
 * renewed every tick by the database's clock, taken over by another node when it expires or is
 * released on a graceful stop).
 */
export type BackgroundJob =
  | 'wallet'
  | 'fiat-payouts'
  | 'fiat-deposit-expiry'
  | 'code-expiry'
  | 'ledger-reconcile';

export const BACKGROUND_JOBS: readonly BackgroundJob[] = [
  'wallet',
  'fiat-payouts',
  'fiat-deposit-expiry',
  'code-expiry',
  'ledger-reconcile',
];

class BackgroundGate {
  private decide: ((job: BackgroundJob) => boolean) | undefined;
  /** Rounds this process let run, per job (a cluster node reports them with its heartbeat). */
  private readonly counts = new Map<BackgroundJob, number>();

  /** Whether this process runs `job`'s next round (counted when it does). */
  mayRun(job: BackgroundJob): boolean {
    const yes = this.decide ? this.decide(job) : true;
    if (yes) this.counts.set(job, (this.counts.get(job) ?? 0) + 1);
    return yes;
  }

  /** A cluster node decides from now on (undefined: back to one process). */
  use(decide: ((job: BackgroundJob) => boolean) | undefined): void {
    this.decide = decide;
  }

  /** Rounds run here per job since the process started (`cluster status` shows them per node). */
  rounds(): Record<string, number> {
    return Object.fromEntries(this.counts);
  }
}

/** The process's gate (one per process, as the background loops are). */
export const background = new BackgroundGate();
