/**
 * Fills the events table with `count` events (every tenth PRIVATE, 50 creators): a benchmark fixture.
 *
 * Each statement inserts one chunk of rows (a multi-row INSERT ... SELECT) in a transaction of its
 * own. Not one statement for all: the row triggers update the change log's head row and the
 * `event_counts` rows once per inserted row, and within one transaction every such update walks
 * the chain of that row's versions the same transaction left (none can be pruned before it ends),
 * so one statement's cost grows with the square of its rows (10,000 events took minutes). Chunks of
 * CHUNK rows keep each chain short, and the changes are still logged, as sync and webhooks need.
 */
import type { SqlClient } from '../src/storage/sql-client.js';

/** Rows per statement: short version chains, few round trips. */
const CHUNK = 500;

export async function seedEvents(client: SqlClient, count: number): Promise<void> {
  for (let from = 1; from <= count; from += CHUNK) {
    await client.query(
      `INSERT INTO events (event_id, name, body, cover, date, date_at, access, created_by, created_at, updated_at)
       SELECT 'bench-' || n,
              'Community event number ' || n,
              '## Agenda' || chr(10) || repeat('Talks, demos and a long Markdown description. ', 6),
              'https://cdn.example.com/covers/' || n || '.png',
              to_char(ts AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'),
              ts, CASE WHEN n % 10 = 7 THEN 'PRIVATE' ELSE 'PUBLIC' END, 'user-' || (n % 50), now(), now()
       FROM (SELECT n, timestamptz '2026-01-01T00:00:00Z' + n * interval '37 minutes' AS ts
             FROM generate_series($1::int, $2::int) AS n) AS s`,
      [from, Math.min(count, from + CHUNK - 1)],
    );
  }
  // Fresh statistics, as autovacuum would soon provide, so the planner uses the list index.
  await client.query('ANALYZE events');
}
