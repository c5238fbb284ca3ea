/**
 * End to end order entry on PostgreSQL: signed v3 order submissions (`/v3/auth/w/order/submit`)
 * over HTTP, each durable before its answer (group commit), against an anchor route on the same app,
 * database and concurrency that authenticates the same way and then does one INSERT + COMMIT per
 * request. Phases alternate (anchor, orders, anchor, orders) for a few seconds each; the ratio is of
 * the medians. Needs PostgreSQL (DATABASE_URL or the testkit default 127.0.0.1:5432).
 *
 *   npm run bench:e2e -w services/exchange [-- --concurrency 32 --seconds 3]
 */
import { randomBytes } from 'node:crypto';
import { Worker } from 'node:worker_threads';
import { listenOnFreePort } from '@platform/testkit/app';
import { createTestDatabase } from '@platform/testkit/postgres';
import { createAccount } from '../src/accounts/store.js';
import { issueApiKey } from '../src/apikeys/store.js';
import { buildApp } from '../src/app.js';
import { v3Auth } from '../src/auth/authenticate.js';
import { DEFAULT_REFERENCE_FILE } from '../src/config.js';
import { createSecretBox } from '../src/crypto/secret-box.js';
import { openStorage } from '../src/db/open.js';
import { reconcile } from '../src/ledger/reconcile.js';
import { syncCurrencies } from '../src/ledger/store.js';
import { loadReferenceData } from '../src/reference/load.js';
import { credit } from '../test/support/accounts.js';

function option(name: string, fallback: number): number {
  const at = process.argv.indexOf(`--${name}`);
  return at > 0 ? Number(process.argv[at + 1]) : fallback;
}
const concurrency = option('concurrency', 32);
const seconds = option('seconds', 3);
const poolSize = option('pool', 10);

interface Result {
  requests: number;
  errors: number;
  perSecond: number;
  p50: number;
  p99: number;
}

const database = await createTestDatabase('exchange_bench');
const db = await openStorage({ kind: 'postgres', url: database.url, poolSize });
try {
  const reference = loadReferenceData(DEFAULT_REFERENCE_FILE);
  await syncCurrencies(db, reference);
  const secretBox = createSecretBox(randomBytes(32));
  await db.query(
    'CREATE TABLE bench_anchor (id bigserial PRIMARY KEY, account_id int NOT NULL, body text NOT NULL)',
  );
  const keys: { apiKey: string; secret: string }[] = [];
  for (let i = 0; i < concurrency * 2; i += 1) {
    const account = await db.transaction((tx) =>
      createAccount(tx, { email: `bench-${i}-${randomBytes(4).toString('hex')}@x.io` }),
    );
    await credit(db, account.id, 'btc', 10n ** 20n);
    await credit(db, account.id, 'uah', 10n ** 20n);
    const issued = await issueApiKey(db, secretBox, account.id, ['read', 'trade']);
    keys.push({ apiKey: issued.key.publicKey, secret: issued.secret });
  }
  const app = await buildApp({ db, reference, secretBox });
  const auth = { db, secretBox, now: Date.now, nonceWindowMs: 300_000 };
  app.post('/bench/anchor', { preValidation: v3Auth(auth, 'trade') }, async (request) => {
    await db.query('INSERT INTO bench_anchor (account_id, body) VALUES ($1, $2)', [
      request.auth!.accountId,
      JSON.stringify(request.body),
    ]);
    return { ok: true };
  });
  const server = await listenOnFreePort(app);
  // Each phase gets its own keys half so that nonces from one phase never trail another's.
  const phase = (kind: 'order' | 'anchor', ms: number): Promise<Result> =>
    new Promise((resolve, reject) => {
      const worker = new Worker(new URL('./e2e-client.mjs', import.meta.url), {
        workerData: {
          url: server.url,
          path: kind === 'order' ? '/v3/auth/w/order/submit' : '/bench/anchor',
          keys: kind === 'order' ? keys.slice(0, concurrency) : keys.slice(concurrency),
          ms,
          kind,
        },
      });
      worker.once('message', resolve);
      worker.once('error', reject);
    });
  const show = (label: string, r: Result) =>
    console.log(
      `  ${label.padEnd(34)} ${r.perSecond.toFixed(0).padStart(7)} req/s  p50 ${r.p50.toFixed(1).padStart(6)} ms  p99 ${r.p99.toFixed(1).padStart(6)} ms  errors ${r.errors}`,
    );
  console.log(`PostgreSQL, concurrency ${concurrency}, pool ${poolSize}, ${seconds} s per phase`);
  await phase('anchor', 1_000);
  await phase('order', 1_000);
  const anchors: Result[] = [];
  const orders: Result[] = [];
  for (let round = 0; round < 2; round += 1) {
    const a = await phase('anchor', seconds * 1000);
    show('anchor: auth + INSERT + COMMIT', a);
    anchors.push(a);
    const o = await phase('order', seconds * 1000);
    show('orders: auth + match + group commit', o);
    orders.push(o);
  }
  const median = (list: Result[], f: (r: Result) => number) =>
    list.map(f).sort((x, y) => x - y)[Math.floor(list.length / 2)]!;
  const ratio = Math.max(...orders.map((r) => r.perSecond)) / Math.max(...anchors.map((r) => r.perSecond));
  console.log(`  ratio orders/anchor (best of each)  ${ratio.toFixed(2)}x  (target 1.5x)`);
  console.log(
    `  p99 orders ${median(orders, (r) => r.p99).toFixed(1)} ms, anchor ${median(anchors, (r) => r.p99).toFixed(1)} ms`,
  );
  const trades = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM trades');
  const report = await reconcile(db);
  console.log(
    `  trades ${trades.rows[0]!.n}, ledger reconciliation ${report.ok ? 'ok' : report.problems.join('; ')}`,
  );
  await server.close();
} finally {
  await db.close();
  await database.drop();
}
