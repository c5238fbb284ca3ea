/**
 * Prints the time of the list query for the first, the middle and the deepest page of each scope by
 * page number, and the middle page reached by cursor (`after` the row before it), on 100,000 seeded
 * events (PostgreSQL): `npx tsx bench/explain.ts`. `BENCH_PLANS=1` also prints the plans of the
 * middle page both ways. The README quotes it.
 */
import { createTestDatabase } from '@platform/testkit/postgres';
import { atOffset, type ListPosition } from '../src/domain/pagination.js';
import { createEventStore, type ListScope } from '../src/storage/event-store.js';
import { migrate } from '../src/storage/migrations.js';
import { createPgClient } from '../src/storage/pg-client.js';
import type { SqlClient } from '../src/storage/sql-client.js';
import { seedEvents } from './seed.js';

const EVENTS = Number(process.env.BENCH_EVENTS ?? 100_000);
const RUNS = Number(process.env.BENCH_RUNS ?? 200);
const db = await createTestDatabase('events_explain');
const client = createPgClient({ url: db.url, poolMax: 2 });

/** The client, remembering the last page statement the store ran (to explain it). */
let lastPage: { sql: string; params: readonly unknown[] } | undefined;
const recording: SqlClient = {
  ...client,
  query(sql, params) {
    if (sql.includes('WITH page')) lastPage = { sql, params: params ?? [] };
    return client.query(sql, params);
  },
};

function quantile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
}

try {
  await migrate(client);
  await seedEvents(client, EVENTS);
  await client.query('VACUUM ANALYZE events'); // sets the visibility map, as autovacuum would
  const store = createEventStore(recording);
  const time = async (scope: ListScope, position: ListPosition, label: string): Promise<void> => {
    const times: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      const started = process.hrtime.bigint();
      await store.list(scope, position, 100);
      times.push(Number(process.hrtime.bigint() - started) / 1e6);
    }
    times.sort((a, b) => a - b);
    console.log(
      `${scope.kind.padEnd(8)} ${label.padEnd(22)}: median ${quantile(times, 0.5).toFixed(2)} ms, ` +
        `p99 ${quantile(times, 0.99).toFixed(2)} ms`,
    );
  };
  const explain = async (title: string): Promise<void> => {
    if (process.env.BENCH_PLANS === undefined || lastPage === undefined) return;
    const plan = await client.query<{ 'QUERY PLAN': string }>(
      `EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) ${lastPage.sql}`,
      lastPage.params,
    );
    console.log(`-- ${title}\n${plan.map((row) => row['QUERY PLAN']).join('\n')}`);
  };
  for (const scope of [{ kind: 'public' }, { kind: 'creator', userId: 'user-7' }, { kind: 'all' }] as const) {
    const total = (await store.list(scope, atOffset(0), 1)).total;
    const middle = Math.floor(total / 200) * 100;
    for (const offset of [0, Math.max(0, total - 100), middle]) {
      await time(scope, atOffset(offset), `offset ${offset}`);
    }
    await explain(`${scope.kind}, middle page by number`);
    // The key of the row just before the middle page, as a `next` link of the page before hands out.
    const previous = await store.list(scope, atOffset(middle - 100), 100);
    if (previous.bounds === null) throw new Error('seeded rows expected');
    const after: ListPosition = { kind: 'after', key: previous.bounds.last };
    const check = await store.list(scope, after, 100);
    const expected = await store.list(scope, atOffset(middle), 100);
    if (check.events[0]?.eventId !== expected.events[0]?.eventId) throw new Error('cursor page differs');
    await time(scope, after, `after (offset ${middle})`);
    await explain(`${scope.kind}, middle page by cursor`);
  }
} finally {
  await client.close();
  await db.drop();
}
