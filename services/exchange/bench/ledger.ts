/**
 * Ledger posting throughput on PostgreSQL (DATABASE_URL or 127.0.0.1:5432) and on in-memory PGlite.
 * Prints ratios against an anchor measured in the same run on the same storage (a `SELECT 1` round
 * trip), so figures compare across machines. Each phase runs for a bounded time (~1.5 s).
 *
 *   npm run bench:ledger -w services/exchange
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { createAccount, systemAccountId } from '../src/accounts/store.js';
import { DEFAULT_REFERENCE_FILE } from '../src/config.js';
import type { Database } from '../src/db/database.js';
import { openStorage } from '../src/db/open.js';
import { adjustment, type JournalEntry, transfer } from '../src/ledger/entry.js';
import { reconcile } from '../src/ledger/reconcile.js';
import { postEntries, postEntry, syncCurrencies } from '../src/ledger/store.js';
import { loadReferenceData } from '../src/reference/load.js';

const PHASE_MS = 1_500;

async function rate(label: string, op: () => Promise<number>): Promise<number> {
  const started = performance.now();
  let done = 0;
  while (performance.now() - started < PHASE_MS) done += await op();
  const perSecond = done / ((performance.now() - started) / 1000);
  console.log(`  ${label.padEnd(44)} ${perSecond.toFixed(0).padStart(8)} /s`);
  return perSecond;
}

async function run(db: Database): Promise<void> {
  const reference = loadReferenceData(DEFAULT_REFERENCE_FILE);
  await syncCurrencies(db, reference);
  const external = await systemAccountId(db, 'external');
  const make = () =>
    db.transaction((tx) => createAccount(tx, { email: `bench-${randomBytes(6).toString('hex')}@x.io` }));
  const a = await make();
  const b = await make();
  const seed = adjustment(a.id, external, 'usdt', 10n ** 30n, 'bench');
  if (!seed.ok) throw new Error(seed.detail);
  await postEntry(db, seed.entry);
  const move = transfer(a.id, b.id, 'usdt', 1n, 'bench');
  if (!move.ok) throw new Error(move.detail);
  const entry: JournalEntry = move.entry;
  const anchor = await rate('anchor: SELECT 1 round trip', async () => {
    await db.query('SELECT 1');
    return 1;
  });
  const single = await rate('postEntry, one entry per commit', async () => {
    await postEntry(db, entry);
    return 1;
  });
  const batch = Array.from({ length: 100 }, () => entry);
  const grouped = await rate('postEntries, 100 entries per commit', async () => {
    await postEntries(db, batch);
    return batch.length;
  });
  const parallel = await rate('postEntry x8 concurrent on one balance', async () => {
    await Promise.all(Array.from({ length: 8 }, () => postEntry(db, entry)));
    return 8;
  });
  console.log(
    `  ratios to anchor: single ${(single / anchor).toFixed(3)}, batched ${(grouped / anchor).toFixed(3)}, ` +
      `concurrent ${(parallel / anchor).toFixed(3)}; batched/single ${(grouped / single).toFixed(1)}x`,
  );
  const report = await reconcile(db);
  console.log(
    `  reconciliation after the run: ${report.ok ? 'ok' : report.problems.join('; ')} (${report.entries} entries)`,
  );
}

const adminUrl = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const name = `bench_ledger_${randomBytes(4).toString('hex')}`;
const admin = new pg.Client({ connectionString: adminUrl });
await admin.connect();
await admin.query(`CREATE DATABASE ${name}`);
try {
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  console.log('PostgreSQL');
  const postgres = await openStorage({ kind: 'postgres', url: url.toString(), poolSize: 10 });
  await run(postgres);
  await postgres.close();
} finally {
  await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await admin.end();
}
console.log('PGlite (in memory)');
const pglite = await openStorage({ kind: 'pglite', dataDir: undefined });
await run(pglite);
await pglite.close();
