/** Fills the events table with `count` events (every tenth PRIVATE, 50 creators) in one statement (a benchmark fixture). */
import type { SqlClient } from '../src/storage/sql-client.js';

export async function seedEvents(client: SqlClient, count: number): Promise<void> {
  await client.query(
    `INSERT INTO events (event_id, name, body, cover, date, date_at, access, created_by, created_at, updated_at)
     SELECT 'bench-' || n,
            'Community event number ' || n,
            '## Agenda' || chr(10) || repeat('Talks, demos and a long Markdown description. ', 6),
            'https://cdn.example.com/covers/' || n || '.png',
            to_char(ts AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'),
            ts, CASE WHEN n % 10 = 7 THEN 'PRIVATE' ELSE 'PUBLIC' END, 'user-' || (n % 50), now(), now()
     FROM (SELECT n, timestamptz '2026-01-01T00:00:00Z' + n * interval '37 minutes' AS ts
           FROM generate_series(1, $1::int) AS n) AS s`,
    [count],
  );
  // Fresh statistics, as autovacuum would soon provide, so the planner uses the list index.
  await client.query('ANALYZE events');
}
