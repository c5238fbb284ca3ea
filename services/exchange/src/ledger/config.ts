import { ConfigError, integer } from '../settings/parse.js';

/** The periodic ledger reconciliation (src/ledger/reconcile-schedule.ts). */
export interface ReconcileScheduleConfig {
  /**
   * How often the ledger invariants are proven over the whole database and the result recorded
   * (`reconcile_runs`, the metric `exchange_ledger_reconcile_ok`); 0 turns the periodic run off
   * (`npm run admin -- reconcile` still records). In a cluster one node runs it.
   * @default 3600000 (`RECONCILE_INTERVAL_MS`, 0 or 10000..604800000)
   */
  readonly intervalMs: number;
}

export function reconcileScheduleConfig(env: NodeJS.ProcessEnv): ReconcileScheduleConfig {
  const intervalMs = integer(env, 'RECONCILE_INTERVAL_MS', 3_600_000, 0, 604_800_000);
  // A whole-ledger scan every few seconds would compete with order entry for the database.
  if (intervalMs !== 0 && intervalMs < 10_000) {
    throw new ConfigError('RECONCILE_INTERVAL_MS', `expected 0 (off) or 10000..604800000, got ${intervalMs}`);
  }
  return Object.freeze({ intervalMs });
}
