/**
 * The change log (migration 7): every write of an event takes the next number from the `head` mark
 * inside its own transaction (trigger `events_log_rows`), so numbers follow commit order and a
 * reader that has seen the head has seen every change up to it. Incremental sync (`src/sync/`) and
 * webhook deliveries (`src/webhooks/`) are positions in this one log, shared by every instance.
 */
import type { SqlQueryable } from '../storage/sql-client.js';

export interface LogMarks {
  /** The last change's number (0 before the first). */
  head: bigint;
  /** Changes up to this number were pruned (SYNC_RETENTION): positions below it are gone. */
  pruned: bigint;
}

export async function readMarks(sql: SqlQueryable): Promise<LogMarks> {
  const rows = await sql.query<{ name: string; seq: string }>(
    'SELECT name, seq::text AS seq FROM event_log_marks',
  );
  const marks: LogMarks = { head: 0n, pruned: 0n };
  for (const row of rows) {
    if (row.name === 'head') marks.head = BigInt(row.seq);
    if (row.name === 'pruned') marks.pruned = BigInt(row.seq);
  }
  return marks;
}

/**
 * Takes the next number for a change written by hand (a webhook test message), inside `tx`: the
 * head row stays locked until `tx` commits, as for the trigger's changes.
 */
export async function nextChangeNumber(tx: SqlQueryable): Promise<bigint> {
  const rows = await tx.query<{ seq: string }>(
    "UPDATE event_log_marks SET seq = seq + 1 WHERE name = 'head' RETURNING seq::text AS seq",
  );
  return BigInt(rows[0]?.seq ?? '0');
}

/** Rows examined per pruning statement, so one statement stays short. */
const PRUNE_BATCH = 10_000;

/**
 * Deletes the oldest changes made before `cutoff`, at most one batch; returns how many. Numbers and
 * times grow together (a number is taken under the head row's lock and stamped right after), so
 * the batch is read from the oldest number on and cut at the last one older than `cutoff`.
 */
export async function pruneChanges(sql: SqlQueryable, cutoff: Date): Promise<number> {
  const rows = await sql.query<{ deleted: number }>(
    `WITH oldest AS (
       SELECT seq, changed_at FROM event_changes
       WHERE seq > (SELECT seq FROM event_log_marks WHERE name = 'pruned')
       ORDER BY seq LIMIT ${PRUNE_BATCH}
     ), cut AS (
       SELECT max(seq) AS seq FROM oldest WHERE changed_at < $1
     ), gone AS (
       DELETE FROM event_changes WHERE seq <= (SELECT seq FROM cut) RETURNING 1
     ), marked AS (
       UPDATE event_log_marks SET seq = greatest(seq, (SELECT seq FROM cut))
       WHERE name = 'pruned' AND (SELECT seq FROM cut) IS NOT NULL
       RETURNING 1
     )
     SELECT (SELECT count(*) FROM gone)::int AS deleted, (SELECT count(*) FROM marked)::int AS marked`,
    [cutoff.toISOString()],
  );
  return Number(rows[0]?.deleted ?? 0);
}

/**
 * A random key shared by every instance through the database (created by the first one to ask):
 * `length` bytes, kept hex-encoded in `events_keys`.
 */
export async function sharedKey(sql: SqlQueryable, name: string, fresh: () => Buffer): Promise<Buffer> {
  await sql.query('INSERT INTO events_keys (name, key) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING', [
    name,
    fresh().toString('hex'),
  ]);
  const rows = await sql.query<{ key: string }>('SELECT key FROM events_keys WHERE name = $1', [name]);
  const key = rows[0]?.key;
  if (key === undefined) throw new Error(`events_keys has no ${name}`);
  return Buffer.from(key, 'hex');
}
