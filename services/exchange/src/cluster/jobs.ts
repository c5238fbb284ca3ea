import type { Sql } from '../db/database.js';
import type { BackgroundJob } from './background.js';

/**
 * Renews the job leases this node holds and takes the expired or free ones (epoch + 1), all by the
 * database's clock; returns the jobs held after the round.
 */
export async function holdJobs(
  db: Sql,
  node: string,
  jobs: readonly BackgroundJob[],
  leaseMs: number,
): Promise<Set<BackgroundJob>> {
  const { rows } = await db.query<{ job: BackgroundJob }>(
    `INSERT INTO cluster_jobs (job, owner, epoch, expires_at)
     SELECT j, $2, 1, clock_timestamp() + $3::int * interval '1 millisecond' FROM unnest($1::text[]) AS j
     ON CONFLICT (job) DO UPDATE
        SET owner = $2, expires_at = EXCLUDED.expires_at,
            epoch = CASE WHEN cluster_jobs.owner = $2 THEN cluster_jobs.epoch ELSE cluster_jobs.epoch + 1 END
      WHERE cluster_jobs.owner = $2 OR cluster_jobs.owner IS NULL OR cluster_jobs.expires_at <= clock_timestamp()
     RETURNING job`,
    [jobs, node, leaseMs],
  );
  return new Set(rows.map((row) => row.job));
}

/** Gives this node's job leases up (a graceful stop): another node takes them at its next tick. */
export async function releaseJobs(db: Sql, node: string): Promise<void> {
  await db.query(`UPDATE cluster_jobs SET owner = NULL, expires_at = '-infinity' WHERE owner = $1`, [node]);
}
