/**
 * Restart-to-healthy time against history length, with and without durable book snapshots.
 *
 * For each history length it generates, directly into a fresh PostgreSQL database, a command log of
 * btcuah (limit orders that rest, and cancels of resting ones, ending with `--resting` orders on the
 * book) with the orders table and ledger consistent with it (accounts credited, their resting orders'
 * funds locked, through journal entries), and a snapshot of the book `--tail` commands before the end,
 * as the server would have written. Then it starts the real server process (`src/server.ts`) on that
 * database and times spawn to the first healthy answer: with BOOK_SNAPSHOT_EVERY=0 (the whole log is
 * replayed) and with snapshots on (the snapshot plus the tail), and reads from the server's start-up
 * log how long it took to rebuild the book (the part that depends on history). The anchor, measured
 * in the same run, is the same server starting on a database without history. Anchor, full replay
 * and snapshot starts alternate; each figure is the best of `--runs`.
 * Needs PostgreSQL (DATABASE_URL or the testkit default 127.0.0.1:5432).
 *
 *   npm run bench:restart -w services/exchange [-- --lengths 500000,1000000 --resting 100000 --tail 20000 --runs 2]
 */

import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startServiceProcess } from '@platform/testkit/app';
import { createTestDatabase, type TestDatabase } from '@platform/testkit/postgres';
import { createAccount } from '../src/accounts/store.js';
import { DEFAULT_REFERENCE_FILE } from '../src/config.js';
import type { Database } from '../src/db/database.js';
import { openStorage } from '../src/db/open.js';
import { lockFunds } from '../src/ledger/entry.js';
import { reconcile } from '../src/ledger/reconcile.js';
import { postEntry, syncCurrencies } from '../src/ledger/store.js';
import { MatchingEngine } from '../src/matching/engine.js';
import type { EngineSnapshot } from '../src/matching/snapshot.js';
import type { Command } from '../src/matching/types.js';
import { DEFAULT_FEES, type TradingMarket, tradingMarkets } from '../src/orders/markets.js';
import { encodeCommands } from '../src/orders/store.js';
import { loadReferenceData } from '../src/reference/load.js';
import { encodeSnapshot } from '../src/snapshots/codec.js';
import { saveSnapshot } from '../src/snapshots/store.js';
// mulberry32, so that every run generates the same history.
import { rng } from '../test/matching/random-commands.js';
import { credit } from '../test/support/accounts.js';
import { stringOption } from './support/options.js';

const lengths = stringOption('lengths', '500000,1000000').split(',').map(Number);
const resting = Number(stringOption('resting', '100000'));
const tail = Number(stringOption('tail', '20000'));
const runs = Number(stringOption('runs', '2'));
const ACCOUNTS = 200;
/** Commands per command-log row, as the order writer logs a batch. */
const PER_ROW = 100;
const MARKET = 'btcuah';

const serviceDir = fileURLToPath(new URL('..', import.meta.url));
const entry = path.join(serviceDir, 'src/server.ts');
mkdirSync(path.join(serviceDir, '.tmp'), { recursive: true });
const reference = loadReferenceData(DEFAULT_REFERENCE_FILE);
const market: TradingMarket = tradingMarkets(reference, DEFAULT_FEES).get(MARKET)!;

/** Runs `fn` on `items` in slices of `size`. */
async function inSlices(count: number, size: number, fn: (from: number, to: number) => Promise<void>) {
  for (let from = 0; from < count; from += size) await fn(from, Math.min(count, from + size));
}

/**
 * Writes a history of `length` commands ending with `resting` orders on the book: `resting` limit
 * orders first, then pairs of a new limit order and a cancel of a random resting one. Buys rest below
 * the mid price and sells above it, so nothing trades. Returns the book's snapshot at `snapshotSeq`.
 */
async function generate(db: Database, length: number, snapshotSeq: number): Promise<EngineSnapshot> {
  const accountIds: number[] = [];
  for (let i = 0; i < ACCOUNTS; i += 1) {
    const account = await db.transaction((tx) => createAccount(tx, { email: `bench-${i}@example.com` }));
    accountIds.push(account.id);
  }
  const random = rng(length);
  const places = resting + (length - resting) / 2;
  const orderAccount = new Uint16Array(places + 1);
  const orderSide = new Uint8Array(places + 1);
  const orderPrice = new Float64Array(places + 1);
  const orderState = new Uint8Array(places + 1); // 0 wait, 1 cancel
  const orderUpdated = new Float64Array(places + 1);
  const amount = 10_000n; // 0.01 BTC
  const start = Date.now() - length;
  const engine = new MatchingEngine(market.spec);
  const live: number[] = [];
  let snapshot: EngineSnapshot | undefined;
  let nextId = 0;
  let pending: Command[] = [];
  let rows: { seq: number; json: string }[] = [];
  const flushRows = async () => {
    await db.query(
      `INSERT INTO engine_commands (market, seq, command)
       SELECT $1, s, c::jsonb FROM unnest($2::bigint[], $3::text[]) AS t(s, c)`,
      [MARKET, rows.map((row) => row.seq), rows.map((row) => row.json)],
    );
    rows = [];
  };
  for (let seq = 1; seq <= length; seq += 1) {
    const time = start + seq;
    let command: Command;
    if (seq <= resting || seq % 2 === 1) {
      nextId += 1;
      const id = nextId;
      const accountNo = Math.floor(random() * ACCOUNTS);
      const buy = random() < 0.5;
      const price = 1_500_000 + (buy ? -1 : 1) * (1_000 + 1_000 * Math.floor(random() * 200));
      orderAccount[id] = accountNo;
      orderSide[id] = buy ? 0 : 1;
      orderPrice[id] = price;
      orderUpdated[id] = time;
      live.push(id);
      command = {
        type: 'limit',
        id,
        account: String(accountIds[accountNo]),
        side: buy ? 'buy' : 'sell',
        price: BigInt(price),
        amount,
        time,
      };
    } else {
      const at = Math.floor(random() * live.length);
      const id = live[at]!;
      live[at] = live[live.length - 1]!;
      live.pop();
      orderState[id] = 1;
      orderUpdated[id] = time;
      command = { type: 'cancel', id, account: String(accountIds[orderAccount[id]!]), time };
    }
    const result = engine.apply(command);
    if (!result.ok) throw new Error(`generated command ${seq} refused: ${result.code}`);
    pending.push(command);
    if (pending.length === PER_ROW || seq === length) {
      rows.push({ seq, json: encodeCommands(pending) });
      pending = [];
      if (rows.length === 500) await flushRows();
    }
    if (seq === snapshotSeq) snapshot = engine.snapshot();
  }
  if (rows.length > 0) await flushRows();
  if (engine.openOrders !== resting) throw new Error(`${engine.openOrders} resting orders, not ${resting}`);
  await inSlices(nextId, 20_000, async (from, to) => {
    const ids = Array.from({ length: to - from }, (_, i) => from + i + 1);
    await db.query(
      `INSERT INTO orders (id, market, account_id, side, kind, price, amount, state, created_at, updated_at)
       SELECT id, $1, acc, side, 'limit', price, $2, state, $3::bigint + id, upd
         FROM unnest($4::bigint[], $5::int[], $6::text[], $7::numeric[], $8::text[], $9::bigint[])
           AS t(id, acc, side, price, state, upd)`,
      [
        MARKET,
        amount.toString(),
        start,
        ids,
        ids.map((id) => accountIds[orderAccount[id]!]),
        ids.map((id) => (orderSide[id] === 0 ? 'buy' : 'sell')),
        ids.map((id) => String(orderPrice[id])),
        ids.map((id) => (orderState[id] === 0 ? 'wait' : 'cancel')),
        ids.map((id) => orderUpdated[id]),
      ],
    );
  });
  // Funds: every account credited, the funds of its resting orders locked (one entry per currency).
  const lockedQuote = new Map<number, bigint>();
  const lockedBase = new Map<number, bigint>();
  for (const id of live) {
    const account = accountIds[orderAccount[id]!]!;
    if (orderSide[id] === 0) {
      const total = market.quoteToLedger(BigInt(orderPrice[id]!) * amount);
      lockedQuote.set(account, (lockedQuote.get(account) ?? 0n) + total);
    } else {
      lockedBase.set(account, (lockedBase.get(account) ?? 0n) + market.baseToLedger(amount));
    }
  }
  for (const account of accountIds) {
    await credit(db, account, market.quote, 10n ** 15n);
    await credit(db, account, market.base, 10n ** 12n);
    for (const [currency, locked] of [
      [market.quote, lockedQuote.get(account) ?? 0n],
      [market.base, lockedBase.get(account) ?? 0n],
    ] as const) {
      if (locked === 0n) continue;
      const built = lockFunds(account, currency, locked, 'bench history');
      if (!built.ok) throw new Error(built.detail);
      const posted = await postEntry(db, built.entry);
      if (!posted.ok) throw new Error(posted.detail);
    }
  }
  return snapshot!;
}

interface Start {
  /** Spawn to the first healthy answer. */
  readonly ms: number;
  /** The server's own figure for rebuilding the btcuah book (its start-up log). */
  readonly bookMs: number;
}

/** One start of the server on `database`: spawn-to-healthy and book rebuild times, in ms. */
async function start(database: TestDatabase, snapshots: boolean): Promise<Start> {
  // Under the service folder, where `node --import tsx` finds tsx.
  const cwd = mkdtempSync(path.join(serviceDir, '.tmp', 'restart-'));
  try {
    const started = performance.now();
    const server = await startServiceProcess({
      name: 'exchange',
      entry,
      cwd,
      env: {
        DATABASE_URL: database.url,
        // a test deployment: the sandbox merchant secret is meant (issue 28 refuses it by default)
        ALLOW_SANDBOX_SECRETS: 'true',
        MASTER_KEY: 'ab'.repeat(32),
        MASTER_KEY_FILE: '',
        DATA_DIR: path.join(cwd, 'data'),
        SEED_DEMO: 'false',
        LOG_LEVEL: 'info',
        BOOK_SNAPSHOT_EVERY: snapshots ? '50000' : '0',
      },
      healthPath: '/health',
      timeoutMs: 600_000,
    });
    const ms = performance.now() - started;
    const logged = server
      .output()
      .split('\n')
      .filter((line) => line.includes(`"market":"${MARKET}"`) && line.includes('"snapshotSeq"'))
      .map((line) => JSON.parse(line) as { ms: number });
    await server.stop();
    return { ms, bookMs: logged[0]?.ms ?? Number.NaN };
  } finally {
    rmSync(cwd, { recursive: true, force: true });
  }
}

const best = (starts: readonly Start[]): Start => ({
  ms: Math.min(...starts.map((s) => s.ms)),
  bookMs: Math.min(...starts.map((s) => s.bookMs)),
});

async function prepared(prefix: string): Promise<{ database: TestDatabase; db: Database }> {
  const database = await createTestDatabase(prefix);
  const db = await openStorage({ kind: 'postgres', url: database.url, poolSize: 4 });
  await syncCurrencies(db, reference);
  return { database, db };
}

const empty = await prepared('restart_anchor');
await empty.db.close();
console.log(
  'restart-to-healthy of the server process (spawn to the first healthy answer) and, in brackets, the ' +
    'time its log gives for rebuilding the btcuah book; best of ' +
    `${runs} runs, anchor/full/snapshot interleaved; anchor: the same server on a database without history`,
);
console.log(
  `${'history'.padStart(9)} ${'resting'.padStart(8)} ${'tail'.padStart(6)} ${'generate s'.padStart(10)} ${'anchor ms'.padStart(10)} ${'full replay ms'.padStart(20)} ${'snapshot ms'.padStart(18)} ${'full/anchor'.padStart(12)} ${'snap/anchor'.padStart(12)} ${'snap/full'.padStart(10)}`,
);
try {
  for (const length of lengths) {
    if ((length - resting) % 2 !== 0 || length < resting) {
      throw new Error('--lengths minus --resting must be even and >= 0');
    }
    const { database, db } = await prepared('restart_bench');
    try {
      const snapshotSeq = Math.floor((length - tail) / PER_ROW) * PER_ROW;
      const began = performance.now();
      const snapshot = await generate(db, length, snapshotSeq);
      await saveSnapshot(db, MARKET, snapshotSeq, encodeSnapshot(snapshot), 2);
      await db.query('ANALYZE');
      const generated = (performance.now() - began) / 1_000;
      const ledger = await reconcile(db);
      if (!ledger.ok) throw new Error(`generated ledger does not reconcile: ${ledger.problems.join('; ')}`);
      const anchors: Start[] = [];
      const fulls: Start[] = [];
      const snaps: Start[] = [];
      for (let run = 0; run < runs; run += 1) {
        anchors.push(await start(empty.database, true));
        fulls.push(await start(database, false));
        snaps.push(await start(database, true));
      }
      const [anchor, full, snap] = [best(anchors), best(fulls), best(snaps)];
      const cell = (s: Start, width: number) => `${s.ms.toFixed(0)} (${s.bookMs.toFixed(0)})`.padStart(width);
      console.log(
        `${String(length).padStart(9)} ${String(resting).padStart(8)} ${String(length - snapshotSeq).padStart(6)} ${generated.toFixed(1).padStart(10)} ${anchor.ms.toFixed(0).padStart(10)} ${cell(full, 20)} ${cell(snap, 18)} ${(full.ms / anchor.ms).toFixed(2).padStart(12)} ${(snap.ms / anchor.ms).toFixed(2).padStart(12)} ${(snap.ms / full.ms).toFixed(3).padStart(10)}`,
      );
    } finally {
      await db.close();
      await database.drop();
    }
  }
} finally {
  await empty.database.drop();
}
