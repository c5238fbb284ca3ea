import { currentTraceContext } from '@platform/observability/trace-context';
import type { Sql } from '@platform/sql-storage/database';
import type { CallbackEvent } from './event.js';

/**
 * The durable outbox: an event is written in the same transaction as the change it reports, so a
 * change is never committed without its callback, and a restart loses nothing. Each event carries its
 * object's `sequence` (1, 2, ...): the object's row is locked by the writing transaction, so the
 * numbers of one object never collide, and a receiver sees a gap or a repeat.
 */
export async function enqueueCallback(
  tx: Sql,
  merchantId: string,
  event: CallbackEvent,
  now: Date,
): Promise<void> {
  const { rows } = await tx.query<{ next: number }>(
    `SELECT coalesce(max(sequence), 0) + 1 AS next FROM callback_outbox WHERE object_type = $1 AND object_id = $2`,
    [event.object, event.id],
  );
  const sequence = Number(rows[0]?.next ?? 1);
  await tx.query(
    `INSERT INTO callback_outbox
       (event_id, merchant_id, object_type, object_id, body, sequence, next_attempt_at, created_at, trace_context)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $7, $8)
     ON CONFLICT (event_id) DO NOTHING`,
    [
      event.event_id,
      merchantId,
      event.object,
      event.id,
      JSON.stringify({ ...event, sequence }),
      sequence,
      now.toISOString(),
      currentTraceContext(),
    ],
  );
}

export interface PendingCallback {
  readonly id: number;
  readonly eventId: string;
  readonly merchantId: string;
  readonly objectType: string;
  readonly objectId: string;
  readonly body: string;
  readonly attempts: number;
  /** The trace of the request that wrote it (see @platform/observability/trace-context). */
  readonly traceContext: string | null;
}

/**
 * Claims up to `limit` due callbacks by pushing their next attempt `leaseMs` ahead (so a second
 * gateway process, or the next pass, does not send them at the same time; `SKIP LOCKED` lets two
 * processes claim disjoint sets). Only the oldest undelivered, not dead-lettered event of each
 * object is due: a merchant sees an object's statuses in order, while other objects go on.
 *
 * In the same statement (one round trip, one commit) it records the callbacks `delivered` since the
 * last claim as delivered at `now`; their objects' next events are then due at once, as if the
 * acknowledgement had been committed first (it commits with them, or neither does). `limit` 0 only
 * records. The walk follows index `callback_outbox_due` and stops at `limit` (migration 030).
 *
 * "Oldest open event of its object" is a correlated scalar subquery, always run per candidate with
 * the object's key bound (index `callback_outbox_object_open`, first row), rather than a NOT EXISTS
 * the planner may turn into an anti join: with the statistics of a table that had just filled (a
 * backlog written faster than autovacuum analyses it) it chose a nested anti join scanning the
 * whole open index for every candidate, 250 ms per claim at 4000 waiting callbacks (the bench).
 */
export async function claimDueCallbacks(
  sql: Sql,
  now: Date,
  leaseMs: number,
  limit: number,
  delivered: readonly number[] = [],
): Promise<PendingCallback[]> {
  const { rows } = await sql.query<{
    id: number;
    event_id: string;
    merchant_id: string;
    object_type: string;
    object_id: string;
    body: string;
    attempts: number;
    trace_context: string | null;
  }>(
    `WITH acknowledged AS (
       UPDATE callback_outbox SET delivered_at = $1, attempts = attempts + 1
       WHERE id = ANY($4::bigint[]) AND delivered_at IS NULL
       RETURNING id)
     UPDATE callback_outbox SET next_attempt_at = $2
     WHERE id IN (
       SELECT o.id FROM callback_outbox o
       WHERE o.delivered_at IS NULL AND o.dead_at IS NULL AND o.next_attempt_at <= $1
         AND o.id <> ALL($4::bigint[])
         AND o.id = (
           SELECT e.id FROM callback_outbox e
           WHERE e.object_type = o.object_type AND e.object_id = o.object_id
             AND e.delivered_at IS NULL AND e.dead_at IS NULL
             AND e.id <> ALL($4::bigint[])
           ORDER BY e.id LIMIT 1)
       ORDER BY o.next_attempt_at, o.id
       LIMIT $3
       FOR UPDATE SKIP LOCKED)
     RETURNING id, event_id, merchant_id, object_type, object_id, body, attempts, trace_context`,
    [now.toISOString(), new Date(now.getTime() + leaseMs).toISOString(), limit, delivered],
  );
  return rows.map((row) => ({
    id: Number(row.id),
    eventId: row.event_id,
    merchantId: row.merchant_id,
    objectType: row.object_type,
    objectId: row.object_id,
    body: row.body,
    attempts: row.attempts,
    traceContext: row.trace_context,
  }));
}

/**
 * Gives back claimed callbacks that were not sent (a stopping dispatcher's hand): due again now, so
 * another instance need not wait for their lease to end. Only rows still leased as claimed are touched.
 */
export async function releaseClaims(sql: Sql, ids: readonly number[], now: Date): Promise<void> {
  if (ids.length === 0) return;
  await sql.query(
    `UPDATE callback_outbox SET next_attempt_at = $2
     WHERE id = ANY($1::bigint[]) AND delivered_at IS NULL AND next_attempt_at > $2`,
    [ids, now.toISOString()],
  );
}

/**
 * A sandbox fault (src/sandbox/): the attempt was dropped on purpose, not sent. It counts as an
 * attempt (so the next one has its own fate) and comes again at `nextAttemptAt`; never dead-letters.
 */
export async function markDropped(sql: Sql, id: number, nextAttemptAt: Date): Promise<void> {
  await sql.query(
    `UPDATE callback_outbox SET attempts = attempts + 1, next_attempt_at = $2,
       last_error = 'sandbox fault: dropped, redelivered later' WHERE id = $1`,
    [id, nextAttemptAt.toISOString()],
  );
}

/** Records a failed attempt: the next one at `nextAttemptAt`, or the dead-letter state when `dead`. */
export async function markFailed(
  sql: Sql,
  id: number,
  nextAttemptAt: Date,
  error: string,
  dead = false,
): Promise<void> {
  await sql.query(
    `UPDATE callback_outbox SET attempts = attempts + 1, next_attempt_at = $2, last_error = $3,
       dead_at = CASE WHEN $4::boolean THEN now() ELSE NULL END
     WHERE id = $1`,
    [id, nextAttemptAt.toISOString(), error.slice(0, 500), dead],
  );
}

/** What a test or an operator can read about one merchant's callbacks. */
export async function pendingCallbackCount(sql: Sql): Promise<number> {
  const { rows } = await sql.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM callback_outbox WHERE delivered_at IS NULL',
  );
  return Number(rows[0]?.n ?? 0);
}
