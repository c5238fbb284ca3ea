/**
 * Incremental sync against the list (issue 45: "a sync of 1,000 changes answers within 2x a list
 * of 1,000 events"). A server process on PostgreSQL, read cache off (both sides read the database);
 * 1,000 events created after a sync token was taken, then in alternating rounds:
 *   anchor:   GET /events following Link `next` (10 pages of 100, the list's largest page)
 *   measured: GET /events/sync?sync_token=T&limit=1000 (the 1,000 changes, one answer)
 * and the same with the sync at limit=100 (10 pages) for a page-for-page view.
 *
 *   npx tsx services/events/bench/sync.bench.ts      # BENCH_ROUNDS (7), BENCH_CHANGES (1000)
 */
import { createPgClient } from '../src/storage/pg-client.js';
import { alternate, database, getText, listAll, load, server, timed, token } from './features-kit.js';
import { seedEvents } from './seed.js';

const CHANGES = Number(process.env.BENCH_CHANGES ?? 1_000);

const db = await database();
const proc = await server(db, { READ_CACHE_MAX_ENTRIES: '0', WEBHOOK_DISPATCH: 'false' });
try {
  const member = await token('bench-member', true);
  const start = JSON.parse((await getText(`${proc.url}/events/sync?limit=1000`, member)).text) as {
    next_sync_token: string;
  };
  const client = createPgClient({ url: db.url, poolMax: 1 });
  await seedEvents(client, CHANGES);
  await client.query('VACUUM ANALYZE');
  await client.close();
  const loadBefore = load();

  const syncAll = async (limit: number): Promise<number> => {
    let items = 0;
    let query = `sync_token=${start.next_sync_token}`;
    for (;;) {
      const page = await getText(`${proc.url}/events/sync?limit=${limit}&${query}`, member);
      const body = JSON.parse(page.text) as { items: unknown[]; next_page_token?: string };
      items += body.items.length;
      if (body.next_page_token === undefined) return items;
      query = `page_token=${body.next_page_token}`;
    }
  };
  // Warm-up, and both read every change / event.
  const listed = await listAll(proc.url, '/events?limit=100', member);
  const synced = await syncAll(1_000);
  if (listed !== CHANGES || synced !== CHANGES) throw new Error(`read ${listed} listed, ${synced} synced`);
  await syncAll(100);

  const one = await alternate(
    () => timed(() => listAll(proc.url, '/events?limit=100', member)),
    () => timed(() => syncAll(1_000)),
  );
  const paged = await alternate(
    () => timed(() => listAll(proc.url, '/events?limit=100', member)),
    () => timed(() => syncAll(100)),
  );
  console.log(`load before ${loadBefore}, after ${load()} (1, 5, 15 min)`);
  console.log(
    `sync of ${CHANGES} changes, one answer: ${one.measured.toFixed(1)} ms; list of ${CHANGES} events (10 pages): ` +
      `${one.anchor.toFixed(1)} ms; ratio ${one.ratio.toFixed(2)}x (target <= 2x) ${one.ratio <= 2 ? 'OK' : 'ABOVE'}` +
      ` | rounds ${one.ratios.map((r) => r.toFixed(2)).join(' ')}`,
  );
  console.log(
    `sync of ${CHANGES} changes, 10 pages:  ${paged.measured.toFixed(1)} ms; list: ${paged.anchor.toFixed(1)} ms; ` +
      `ratio ${paged.ratio.toFixed(2)}x | rounds ${paged.ratios.map((r) => r.toFixed(2)).join(' ')}`,
  );
} finally {
  await proc.stop();
  await db.drop();
}
