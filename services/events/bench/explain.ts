/**
 * Prints the query plan and time of the list query for the first and the deepest page of each
 * scope, on 100,000 seeded events (PostgreSQL): `npx tsx bench/explain.ts`. The README quotes it.
 */
import { createTestDatabase } from '@platform/testkit/postgres';
import { atOffset } from '../src/domain/pagination.js';
import { createEventStore } from '../src/storage/event-store.js';
import { migrate } from '../src/storage/migrations.js';
import { createPgClient } from '../src/storage/pg-client.js';
import { seedEvents } from './seed.js';

const EVENTS = Number(process.env.BENCH_EVENTS ?? 100_000);
const db = await createTestDatabase('events_explain');
const client = createPgClient({ url: db.url, poolMax: 2 });
try {
  await migrate(client);
  await seedEvents(client, EVENTS);
  await client.query('VACUUM ANALYZE events'); // sets the visibility map, as autovacuum would
  const store = createEventStore(client);
  for (const scope of [{ kind: 'public' }, { kind: 'creator', userId: 'user-7' }, { kind: 'all' }] as const) {
    const total = (await store.list(scope, atOffset(0), 1)).total;
    for (const offset of [0, Math.max(0, total - 100)]) {
      const times: number[] = [];
      for (let i = 0; i < 20; i++) {
        const started = process.hrtime.bigint();
        await store.list(scope, atOffset(offset), 100);
        times.push(Number(process.hrtime.bigint() - started) / 1e6);
      }
      times.sort((a, b) => a - b);
      console.log(
        `${scope.kind.padEnd(8)} offset ${String(offset).padStart(6)}: median ${times[10]!.toFixed(2)} ms, ` +
          `max ${times.at(-1)!.toFixed(2)} ms`,
      );
    }
  }
  if (process.env.BENCH_PLANS !== undefined) {
    const plan = await client.query<{ 'QUERY PLAN': string }>(
      `EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF)
       WITH page AS MATERIALIZED (SELECT event_id, date_at FROM events ORDER BY date_at, event_id
                                  LIMIT 100 OFFSET ${EVENTS - 100})
       SELECT e.* FROM page JOIN events e ON e.event_id = page.event_id ORDER BY page.date_at, page.event_id`,
    );
    console.log(plan.map((row) => row['QUERY PLAN']).join('\n'));
  }
} finally {
  await client.close();
  await db.drop();
}
