import { inSpan } from '@platform/observability/client-spans';
import { background } from '../cluster/background.js';
import type { Sql } from '../db/database.js';
import { type ReconciliationReport, reconcile } from './reconcile.js';
import { lastReconcileRun, recordReconcileRun } from './reconcile-runs.js';

/** How often the schedule looks whether a run is due (at most; a shorter interval looks sooner). */
const CHECK_EVERY_MS = 60_000;

export interface ReconcileSchedule {
  /** The run in progress, if any (tests, shutdown). */
  readonly running: Promise<void>;
  stop(): Promise<void>;
}

/**
 * Runs the ledger reconciliation every `intervalMs` and records its result, as
 * `npm run admin -- reconcile` does. Due is decided from the newest recorded run (by the database's
 * clock), not from this process's timer, so a restart or a cluster's handover does not run it more
 * often; in a cluster only the node holding the `ledger-reconcile` job lease runs it
 * (src/cluster/background.ts). `onReport` hears every finished run (a failed one is logged there).
 */
export function startReconcileSchedule(
  db: Sql,
  intervalMs: number,
  onReport: (report: ReconciliationReport) => void,
  onError: (error: unknown) => void,
): ReconcileSchedule {
  let running: Promise<void> = Promise.resolve();
  let busy = false;
  const tick = (): void => {
    if (busy || !background.mayRun('ledger-reconcile')) return;
    busy = true;
    running = (async () => {
      const last = await lastReconcileRun(db);
      const { rows } = await db.query<{ now: number }>('SELECT extract(epoch FROM now())::float8 AS now');
      const now = Number(rows[0]?.now);
      if (last !== undefined && (now - last.ranAt) * 1000 < intervalMs) return;
      // A trace of its own when tracing is on (its statements under it).
      const report = await inSpan('ledger reconcile', async () => {
        const found = await reconcile(db);
        await recordReconcileRun(db, found);
        return found;
      });
      onReport(report);
    })()
      .catch(onError)
      .finally(() => {
        busy = false;
      });
  };
  const timer = setInterval(tick, Math.min(intervalMs, CHECK_EVERY_MS));
  timer.unref();
  // The first look soon after the start, once the node knows its leases.
  const first = setTimeout(tick, Math.min(intervalMs, 1_000));
  first.unref();
  return {
    get running() {
      return running;
    },
    async stop() {
      clearInterval(timer);
      clearTimeout(first);
      await running;
    },
  };
}
