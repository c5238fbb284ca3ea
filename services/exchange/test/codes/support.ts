import type { Scope } from '../../src/apikeys/store.js';
import { escrowAccountId } from '../../src/codes/store.js';
import type { App } from '../../src/http/typed.js';
import { balancesOf } from '../../src/ledger/store.js';
import { parseAmount } from '../../src/money/decimal.js';
import { accountWithKey, credit } from '../support/accounts.js';
import { v3Headers } from '../support/signing.js';
import { reference, type Target } from '../support/targets.js';

/** A signed v3 client of one key that can also PUT (redeem) and choose its client address. */
export function codeClient(app: () => App, apiKey: string, secret: string, address = '127.0.0.1') {
  const call = (method: 'POST' | 'PUT', path: string, body: unknown = {}, from = address) => {
    const text = JSON.stringify(body);
    return app().inject({
      method,
      url: path,
      payload: text,
      headers: v3Headers(apiKey, secret, path, text),
      remoteAddress: from,
    });
  };
  return {
    create: (body: unknown) => call('POST', '/v3/auth/svc_codes', body),
    redeem: (code: string, from?: string) => call('PUT', '/v3/auth/svc_codes/redeem', { code }, from),
    details: (id: unknown) => call('POST', '/v3/auth/svc_codes/details', { id }),
    issued: (body: unknown = {}) => call('POST', '/v3/auth/svc_codes/issued-by-me', body),
    redeemed: (body: unknown = {}) => call('POST', '/v3/auth/svc_codes/redeemed-by-me', body),
    call,
  };
}
export type CodeClient = ReturnType<typeof codeClient>;

/** Ledger minor units of a decimal amount (BTC has 10 ledger decimals, ETH 8). */
export function units(currency: string, text: string): bigint {
  const parsed = parseAmount(text, reference.ledgerPrecision(currency));
  if (!parsed.ok) throw new Error(`bad amount ${text}`);
  return parsed.value;
}

/** A fresh account with a key, 1 BTC and 10 ETH. */
export async function fundedUser(target: Target, app: () => App, scopes: Scope[] = ['read', 'withdraw']) {
  const user = await accountWithKey(target.db(), scopes);
  await credit(target.db(), user.account.id, 'btc', units('btc', '1'));
  await credit(target.db(), user.account.id, 'eth', units('eth', '10'));
  return {
    ...user,
    id: user.account.id,
    svcid: user.account.svcid,
    client: codeClient(app, user.apiKey, user.secret),
  };
}

/** Available balance of one account in one currency. */
export async function available(target: Target, accountId: number, currency: string): Promise<bigint> {
  return (await balancesOf(target.db(), accountId)).find((b) => b.currency === currency)?.available ?? 0n;
}

export async function escrow(target: Target, currency: string): Promise<bigint> {
  return available(target, await escrowAccountId(target.db()), currency);
}

/** Snapshot of the balances of some accounts and the escrow, to prove a refusal moved nothing. */
export async function snapshot(target: Target, accountIds: number[]): Promise<string> {
  const escrowId = await escrowAccountId(target.db());
  const rows = [];
  for (const id of [...accountIds, escrowId]) rows.push(await balancesOf(target.db(), id));
  return JSON.stringify(rows, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v));
}
