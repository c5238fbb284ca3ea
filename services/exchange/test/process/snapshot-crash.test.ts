import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type ServiceProcess, startServiceProcess } from '@platform/testkit/app';
import { useTestDatabase } from '@platform/testkit/fixtures';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueApiKey } from '../../src/apikeys/store.js';
import { parseMasterKey } from '../../src/config.js';
import { createSecretBox } from '../../src/crypto/secret-box.js';
import type { Database } from '../../src/db/database.js';
import { openStorage } from '../../src/db/open.js';
import { syncCurrencies } from '../../src/ledger/store.js';
import { DEFAULT_FEES, tradingMarkets } from '../../src/orders/markets.js';
import { replayLog } from '../../src/orders/replay.js';
import { BookSnapshots } from '../../src/snapshots/book-snapshots.js';
import { snapshotSeqs } from '../../src/snapshots/store.js';
import { rng } from '../matching/random-commands.js';
import { credit, newAccount } from '../support/accounts.js';
import { clientSignV2, nextNonce } from '../support/signing.js';
import { reference } from '../support/targets.js';

/**
 * A crash while a book snapshot is being written (src/snapshots/): the server is killed by the
 * `book-snapshot-mid-write` fail point inside the transaction writing its second snapshot. The next
 * start must use the first snapshot and replay the commands after it, and that book must equal the
 * one a replay of the whole command log gives.
 */
const serviceDir = fileURLToPath(new URL('../..', import.meta.url));
const entry = path.join(serviceDir, 'src/server.ts');
mkdirSync(path.join(serviceDir, '.tmp'), { recursive: true });
const cwd = mkdtempSync(path.join(serviceDir, '.tmp', 'snapshot-crash-'));
afterAll(() => rmSync(cwd, { recursive: true, force: true }));
const database = useTestDatabase('exchange_snapshot_crash');
const MASTER_KEY = 'ab'.repeat(32);
const EVERY = 25;
const market = tradingMarkets(reference, DEFAULT_FEES).get('btcuah')!;

/** Polls until `check` holds or `ms` pass. */
async function until(check: () => boolean, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (check()) return true;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return check();
}

describe('crash while a book snapshot is written (real process, PostgreSQL)', () => {
  let db: Database;
  /** Two traders, so that their orders fill each other (an account's own orders do not trade). */
  const traders: { apiKey: string; secret: string }[] = [];
  beforeAll(async () => {
    db = await openStorage({ kind: 'postgres', url: database.url, poolSize: 4 });
    await syncCurrencies(db, reference);
    const box = createSecretBox(parseMasterKey(MASTER_KEY, 'MASTER_KEY'));
    for (let i = 0; i < 2; i += 1) {
      const account = await newAccount(db);
      await credit(db, account.id, 'btc', 10n ** 12n);
      await credit(db, account.id, 'uah', 10n ** 16n);
      const { key, secret } = await issueApiKey(db, box, account.id, ['read', 'trade']);
      traders.push({ apiKey: key.publicKey, secret });
    }
  });
  afterAll(async () => {
    await db?.close();
  });

  const env = (failpoint: string) => ({
    DATABASE_URL: database.url,
    MASTER_KEY,
    MASTER_KEY_FILE: '',
    DATA_DIR: path.join(cwd, 'data'),
    SEED_DEMO: 'false',
    LOG_LEVEL: 'info',
    BOOK_SNAPSHOT_EVERY: String(EVERY),
    EXCHANGE_FAILPOINT: failpoint,
  });
  const start = (failpoint: string) =>
    startServiceProcess({
      sandboxSecrets: true,
      name: 'exchange',
      entry,
      cwd,
      env: env(failpoint),
      port: 0,
      healthPath: '/health',
      timeoutMs: 60_000,
    });

  /** Places crossing limit orders one after another until the server is gone; returns how many were answered. */
  async function tradeUntilGone(server: ServiceProcess, limit: number): Promise<number> {
    const random = rng(77);
    for (let i = 0; i < limit; i += 1) {
      const trader = traders[i % 2]!;
      const params = {
        market: 'btcuah',
        side: random() < 0.5 ? 'buy' : 'sell',
        volume: String((1 + Math.floor(random() * 4)) / 100),
        price: String(1_500_000 + (Math.floor(random() * 7) - 3) * 1_000),
        access_key: trader.apiKey,
        tonce: nextNonce(),
      };
      const body = new URLSearchParams({
        ...params,
        signature: clientSignV2(trader.secret, 'POST', '/api/v2/orders', params),
      });
      let response: Response;
      try {
        response = await fetch(`${server.url}/api/v2/orders`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body,
        });
        await response.text();
      } catch {
        return i;
      }
      if (response.status !== 201) throw new Error(`order refused with ${response.status}`);
    }
    return limit;
  }

  it('starts from the previous snapshot, replays the rest, and the book equals a whole replay', async () => {
    const first = await start('book-snapshot-mid-write');
    let answered: number;
    try {
      answered = await tradeUntilGone(first, 10 * EVERY);
      // The fail point kills the process itself; nothing here stops it.
      expect(await until(() => !first.isRunning(), 10_000)).toBe(true);
    } finally {
      await first.stop();
    }
    expect(answered).toBeLessThan(10 * EVERY);
    // The first snapshot committed; the second died with its transaction.
    const stored = await snapshotSeqs(db, 'btcuah');
    expect(stored).toHaveLength(1);
    const [snapshotSeq] = stored;
    const full = await replayLog(db, market);
    expect(full.seq).toBeGreaterThan(snapshotSeq! + EVERY - 1);

    const second = await start('');
    try {
      const restored = second
        .output()
        .split('\n')
        .filter((line) => line.includes('"snapshotSeq"') && line.includes('"market":"btcuah"'))
        .map((line) => JSON.parse(line) as { snapshotSeq: number | null; seq: number });
      expect(restored).toEqual([expect.objectContaining({ snapshotSeq, seq: full.seq })]);
      // The same restore in this process gives the whole replay's book exactly (orders, priority,
      // filled and cancelled ids, counters); the server's public book agrees with it.
      const inTest = await new BookSnapshots(db, { every: EVERY, keep: 2 }).restore(market);
      expect(inTest.engine.snapshot()).toEqual(full.engine.snapshot());
      expect(full.engine.snapshot().filled.length).toBeGreaterThan(0);
      const depth = full.engine.depth();
      const book = (await (await fetch(`${second.url}/v3/book/btcuah`)).json()) as number[][];
      const orders = (levels: readonly (readonly [bigint, bigint, number])[]) =>
        levels.reduce((sum, level) => sum + level[2], 0);
      expect(book.reduce((sum, level) => sum + level[2]!, 0)).toBe(orders(depth.bids) + orders(depth.asks));
      // And it trades on: a new order is answered and a snapshot written again.
      expect(await tradeUntilGone(second, EVERY + 5)).toBe(EVERY + 5);
    } finally {
      await second.stop();
    }
    const after = await snapshotSeqs(db, 'btcuah');
    expect(after[0]!).toBeGreaterThan(snapshotSeq!);
    // Two server starts on a shared 2-core machine: far beyond the 30 s default when it is busy.
  }, 180_000);
});
