import { listenOnFreePort, type RunningApp } from '@platform/testkit/app';
import { Registry } from 'prom-client';
import { afterAll, beforeAll } from 'vitest';
import { issueApiKey, type Scope } from '../../src/apikeys/store.js';
import { buildApp } from '../../src/app.js';
import type { Database } from '../../src/db/database.js';
import type { App } from '../../src/http/typed.js';
import { units } from '../codes/support.js';
import { credit, newAccount } from '../support/accounts.js';
import { reference, secretBox, type Target } from '../support/targets.js';
import { httpClient } from '../withdraw-addresses/support.js';

/** A real listening server on the target's storage with the default switch scheduler. */
export function useServer(target: Target) {
  let app: App | undefined;
  let running: RunningApp | undefined;
  const metrics = new Registry();
  beforeAll(async () => {
    app = await buildApp({ db: target.db(), reference, secretBox, nonceWindowMs: 86_400_000, metrics });
    running = await listenOnFreePort(app);
  });
  afterAll(async () => {
    await running?.close();
  });
  return { url: () => running!.url, app: () => app!, metrics };
}

/** A fresh account with 1 BTC, 10 ETH and 100,000 UAH. */
export async function tradingAccount(db: Database) {
  const account = await newAccount(db);
  await credit(db, account.id, 'btc', units('btc', '1'));
  await credit(db, account.id, 'eth', units('eth', '10'));
  await credit(db, account.id, 'uah', units('uah', '100000'));
  return account;
}

/** A trading key of the account as a signed HTTP client, and the key's id. */
export async function tradingKey(
  db: Database,
  accountId: number,
  url: () => string,
  scopes: Scope[] = ['read', 'trade'],
) {
  const { key, secret } = await issueApiKey(db, secretBox, accountId, scopes);
  return { call: httpClient(url, key.publicKey, secret), keyId: key.id, apiKey: key.publicKey, secret };
}

/** A resting buy (far below any sell) of `amount` at `price`: answers the order id. */
export async function restingBuy(
  call: ReturnType<typeof httpClient>,
  market = 'btcuah',
  price = '100',
  amount = '0.01',
): Promise<number> {
  const placed = await call('/v3/auth/w/order/submit', { symbol: market, type: 'limit', amount, price });
  if (placed.status !== 200) throw new Error(`order refused: ${JSON.stringify(placed.body)}`);
  return placed.body[0] as number;
}

/** States of orders by id. */
export async function statesOf(db: Database, ids: readonly number[]): Promise<Record<number, string>> {
  const { rows } = await db.query<{ id: string; state: string }>(
    'SELECT id::text, state FROM orders WHERE id = ANY($1::bigint[])',
    [ids],
  );
  return Object.fromEntries(rows.map((row) => [Number(row.id), row.state]));
}

/** Locked funds of an account by currency, in minor units. */
export async function lockedOf(db: Database, accountId: number): Promise<Record<string, bigint>> {
  const { rows } = await db.query<{ currency: string; locked: string }>(
    `SELECT currency, locked::text FROM balances WHERE account_id = $1`,
    [accountId],
  );
  return Object.fromEntries(rows.map((row) => [row.currency, BigInt(row.locked)]));
}
