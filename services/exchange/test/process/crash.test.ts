import { useTestDatabase } from '@platform/testkit/fixtures';
import { servicePid } from '@platform/testkit/process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueApiKey } from '../../src/apikeys/store.js';
import { parseMasterKey } from '../../src/config.js';
import { createSecretBox } from '../../src/crypto/secret-box.js';
import type { Database } from '../../src/db/database.js';
import { openStorage } from '../../src/db/open.js';
import { reconcile } from '../../src/ledger/reconcile.js';
import { syncCurrencies } from '../../src/ledger/store.js';
import { credit, newAccount } from '../support/accounts.js';
import { postgresEnv, startExchangeProcess, useServerFolder } from '../support/server-process.js';
import { clientSignV2, nextNonce } from '../support/signing.js';
import { reference } from '../support/targets.js';

const cwd = useServerFolder('crash-');
const database = useTestDatabase('exchange_crash');
const MASTER_KEY = 'ab'.repeat(32);

interface Trader {
  readonly accountId: number;
  readonly apiKey: string;
  readonly secret: string;
}

const FUNDS = { btc: 10n ** 12n, uah: 10n ** 16n };
const ACCOUNTS = 4;
const ROUNDS = 3;

describe('crash durability (real process, PostgreSQL)', () => {
  let db: Database;
  const traders: Trader[] = [];
  beforeAll(async () => {
    db = await openStorage({ kind: 'postgres', url: database.url, poolSize: 4 });
    await syncCurrencies(db, reference);
    // Keys sealed with the server's master key, so the server can check their signatures.
    const box = createSecretBox(parseMasterKey(MASTER_KEY, 'MASTER_KEY'));
    for (let i = 0; i < ACCOUNTS; i += 1) {
      const account = await newAccount(db);
      for (const [currency, amount] of Object.entries(FUNDS)) await credit(db, account.id, currency, amount);
      const { key, secret } = await issueApiKey(db, box, account.id, ['read', 'trade']);
      traders.push({ accountId: account.id, apiKey: key.publicKey, secret });
    }
  });
  afterAll(async () => {
    await db?.close();
  });

  /** Funds of the traders per currency (available + locked, fees included): trading moves, never makes. */
  async function totals(): Promise<Record<string, string>> {
    const { rows } = await db.query<{ currency: string; total: string }>(
      `SELECT b.currency, sum(b.available + b.locked)::text AS total FROM balances b
         JOIN accounts a ON a.id = b.account_id WHERE a.system_code IS DISTINCT FROM 'external'
        GROUP BY b.currency ORDER BY 1`,
    );
    return Object.fromEntries(rows.map((r) => [r.currency, r.total]));
  }

  it('keeps every acknowledged order, the balances and the ledger across SIGKILLs mid-batch under crossing load', async () => {
    const env = postgresEnv(cwd, database.url, MASTER_KEY);
    const credited = await totals();
    expect(Object.keys(credited)).toEqual(['btc', 'uah']);
    const acked = new Map<number, number>(); // order id -> account id
    let random = 12_345;
    const next = () => {
      random = (random * 1_103_515_245 + 12_345) % 2_147_483_648;
      return random / 2_147_483_648;
    };
    const start = () => startExchangeProcess(cwd, env, { sandboxSecrets: true });
    let server = await start();
    for (let round = 0; round < ROUNDS; round += 1) {
      let inFlight = 0;
      let inFlightAtKill = -1;
      let ackedThisRound = 0;
      let killed = false;
      let onEnough = () => {};
      const enough = new Promise<void>((resolve) => {
        onEnough = resolve;
      });
      // Each trader sends one order after the other (its tonces must increase), all four at once,
      // buying and selling around one price so that their orders cross.
      const trade = async (trader: Trader) => {
        while (!killed) {
          const params = {
            market: 'btcuah',
            side: next() < 0.5 ? 'buy' : 'sell',
            volume: '0.01',
            price: String(1_500_000 + Math.floor(next() * 7 - 3) * 1_000),
            access_key: trader.apiKey,
            tonce: nextNonce(),
          };
          const body = new URLSearchParams({
            ...params,
            signature: clientSignV2(trader.secret, 'POST', '/api/v2/orders', params),
          });
          inFlight += 1;
          let response: Response;
          try {
            response = await fetch(`${server.url}/api/v2/orders`, {
              method: 'POST',
              headers: { 'content-type': 'application/x-www-form-urlencoded' },
              body,
            });
          } catch {
            return; // the server is gone: this order may or may not be stored
          } finally {
            inFlight -= 1;
          }
          const text = await response.text().catch(() => '');
          if (killed) return;
          expect(response.status, text).toBe(201);
          acked.set((JSON.parse(text) as { id: number }).id, trader.accountId);
          ackedThisRound += 1;
          if (ackedThisRound >= 25) onEnough();
        }
      };
      const load = traders.map(trade);
      try {
        await enough;
        // Killed while the traders' requests are out: some in a batch being written.
        inFlightAtKill = inFlight;
        killed = true;
        process.kill(servicePid(server.pid!), 'SIGKILL');
        await Promise.all(load);
      } finally {
        killed = true;
        await server.stop();
      }
      expect(inFlightAtKill).toBeGreaterThan(0);

      // After each crash, what a restarted server and the database hold; it takes the next round.
      server = await start();
      try {
        const ids = [...acked.keys()];
        const { rows } = await db.query<{ id: string; account_id: number }>(
          'SELECT id::text, account_id FROM orders WHERE id = ANY($1::bigint[])',
          [ids],
        );
        const stored = new Map(rows.map((row) => [Number(row.id), row.account_id]));
        expect(stored).toEqual(acked);
        expect((await reconcile(db)).problems).toEqual([]);
        expect(await totals()).toEqual(credited);
        const trades = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM trades');
        if (round === ROUNDS - 1) expect(trades.rows[0]!.n).toBeGreaterThan(0);
        // The rebuilt book holds exactly the orders stored as waiting.
        const book = (await (await fetch(`${server.url}/v3/book/btcuah`)).json()) as number[][];
        const waiting = await db.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM orders WHERE market = 'btcuah' AND state = 'wait'`,
        );
        expect(book.reduce((sum, level) => sum + level[2]!, 0)).toBe(waiting.rows[0]!.n);
      } catch (error) {
        await server.stop();
        throw error;
      }
    }
    await server.stop();
  }, 180_000);
});
