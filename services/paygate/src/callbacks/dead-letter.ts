import type { Sql } from '@platform/sql-storage/database';

export interface DeadCallback {
  readonly id: number;
  readonly event_id: string;
  readonly merchant_id: string;
  readonly object: string;
  readonly object_id: string;
  readonly sequence: number;
  readonly attempts: number;
  readonly last_error: string | null;
  readonly dead_at: string;
}

/** Callbacks that used up their attempts, oldest first. */
export async function deadCallbacks(sql: Sql, limit = 200): Promise<DeadCallback[]> {
  const { rows } = await sql.query<{
    id: string | number;
    event_id: string;
    merchant_id: string;
    object_type: string;
    object_id: string;
    sequence: number;
    attempts: number;
    last_error: string | null;
    dead_at: Date | string;
  }>(
    `SELECT id, event_id, merchant_id, object_type, object_id, sequence, attempts, last_error, dead_at
     FROM callback_outbox WHERE dead_at IS NOT NULL AND delivered_at IS NULL ORDER BY dead_at, id LIMIT $1`,
    [limit],
  );
  return rows.map((row) => ({
    id: Number(row.id),
    event_id: row.event_id,
    merchant_id: row.merchant_id,
    object: row.object_type,
    object_id: row.object_id,
    sequence: row.sequence,
    attempts: row.attempts,
    last_error: row.last_error,
    dead_at: new Date(row.dead_at).toISOString(),
  }));
}

/**
 * Puts a dead-lettered callback back in the queue, due now, with its attempts counted afresh.
 * Returns false when `id` names no dead callback.
 */
export async function retryDeadCallback(sql: Sql, id: number, now: Date): Promise<boolean> {
  const { rows } = await sql.query(
    `UPDATE callback_outbox SET dead_at = NULL, attempts = 0, next_attempt_at = $2
     WHERE id = $1 AND dead_at IS NOT NULL AND delivered_at IS NULL RETURNING id`,
    [id, now.toISOString()],
  );
  return rows.length > 0;
}
