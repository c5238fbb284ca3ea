import type { Database, Sql } from '@platform/sql-storage/database';

/** Serializes position assignment across gateway processes (any constant distinct from the migration lock). */
const POSITION_LOCK = 726_375;

/**
 * Gives committed events their merchant-wide `position`, in one serialized step after their commit:
 * positions are handed out in the order events become visible, so a reader that has seen position N
 * never later finds an event below N (a position taken at insert time would not promise that: a
 * transaction that started first may commit last). Numbers grow but may skip.
 */
export async function assignPositions(db: Database, limit = 1_000): Promise<number> {
  // The common case, nothing new, costs one indexed read instead of a locking transaction.
  const { rows: waiting } = await db.query('SELECT 1 FROM callback_outbox WHERE position IS NULL LIMIT 1');
  if (waiting.length === 0) return 0;
  return db.transaction(async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock($1)', [POSITION_LOCK]);
    const { rows } = await tx.query(
      `UPDATE callback_outbox o SET position = t.position
       FROM (SELECT id, nextval('callback_position') AS position
             FROM (SELECT id FROM callback_outbox WHERE position IS NULL ORDER BY id LIMIT $1) due) t
       WHERE o.id = t.id RETURNING o.id`,
      [limit],
    );
    return rows.length;
  });
}

export interface StoredEvent {
  readonly position: number;
  readonly body: string;
}

/** A merchant's events after `after`, in position order. */
export async function eventsAfter(
  sql: Sql,
  merchantId: string,
  after: number,
  limit: number,
): Promise<StoredEvent[]> {
  const { rows } = await sql.query<{ position: string | number; body: string }>(
    `SELECT position, body FROM callback_outbox
     WHERE merchant_id = $1 AND position > $2 ORDER BY position LIMIT $3`,
    [merchantId, after, limit],
  );
  return rows.map((row) => ({ position: Number(row.position), body: row.body }));
}
