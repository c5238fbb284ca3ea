import type { Sql } from '../db/database.js';
import type { ReconciliationReport } from './reconcile.js';

/** Keeps the outcome of a reconciliation, for the metrics (`exchange_ledger_reconcile_ok`) and alerts. */
export async function recordReconcileRun(sql: Sql, report: ReconciliationReport): Promise<void> {
  await sql.query('INSERT INTO reconcile_runs (ok, problems) VALUES ($1, $2)', [
    report.ok,
    report.problems.length,
  ]);
}

export interface ReconcileRun {
  readonly ok: boolean;
  readonly problems: number;
  /** Seconds since the epoch. */
  readonly ranAt: number;
}

/** The newest recorded reconciliation, or undefined when none was run yet. */
export async function lastReconcileRun(sql: Sql): Promise<ReconcileRun | undefined> {
  const { rows } = await sql.query<{ ok: boolean; problems: number; ran_at: number }>(
    `SELECT ok, problems, extract(epoch FROM ran_at)::float8 AS ran_at
       FROM reconcile_runs ORDER BY id DESC LIMIT 1`,
  );
  const row = rows[0];
  return row ? { ok: row.ok, problems: row.problems, ranAt: Number(row.ran_at) } : undefined;
}
