/**
 * Where the exchange differed from ../shared/spec/exchange-api.md (issue 28): the executed-orders
 * list, the status filter of redeemed-by-me, and signed requests whose query string or signature case
 * the signature did not pin down.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import type { App } from '../../src/http/typed.js';
import { accountWithKey, credit } from '../support/accounts.js';
import { client } from '../support/client.js';
import { clientSignV2, nextNonce, v3Headers } from '../support/signing.js';
import { reference, secretBox, usePostgresTarget } from '../support/targets.js';

const target = usePostgresTarget();
let app: App;

beforeAll(async () => {
  app = await buildApp({ db: target.db(), reference, secretBox });
});
afterAll(async () => {
  await app?.close();
});

async function trader() {
  const user = await accountWithKey(target.db(), ['read', 'trade', 'withdraw']);
  await credit(target.db(), user.account.id, 'btc', 10n ** BigInt(reference.ledgerPrecision('btc')));
  await credit(target.db(), user.account.id, 'uah', 10n ** 12n);
  return { ...user, api: client(() => app, user.apiKey, user.secret) };
}

describe('POST /v3/auth/r/orders[/{market}]/hist lists executed orders only', () => {
  it('an order cancelled without a trade is not listed; a filled one is, EXECUTED', async () => {
    const maker = await trader();
    const taker = await trader();
    const untraded = await maker.api.v3('/v3/auth/w/order/submit', {
      symbol: 'btcuah',
      type: 'limit',
      amount: '0.1',
      price: '1000',
    });
    expect(untraded.statusCode).toBe(200);
    const untradedId = untraded.json()[0];
    expect((await maker.api.v3('/v3/order/cancel', { order_id: untradedId })).statusCode).toBe(200);
    const ask = await maker.api.v3('/v3/auth/w/order/submit', {
      symbol: 'btcuah',
      type: 'limit',
      amount: '-0.1',
      price: '999999',
    });
    const bid = await taker.api.v3('/v3/auth/w/order/submit', {
      symbol: 'btcuah',
      type: 'limit',
      amount: '0.1',
      price: '999999',
    });
    expect([ask.statusCode, bid.statusCode]).toEqual([200, 200]);
    for (const path of ['/v3/auth/r/orders/hist', '/v3/auth/r/orders/btcuah/hist']) {
      const hist = await maker.api.v3(path, {});
      expect(hist.json().map((order: unknown[]) => [order[0], order[13]])).toEqual([
        [ask.json()[0], 'EXECUTED'],
      ]);
    }
  });
});

describe('POST /v3/auth/svc_codes/redeemed-by-me ignores the status filter, as the spec says', () => {
  it('a redeemed code is listed whatever status is asked for', async () => {
    const owner = await trader();
    const redeemer = await trader();
    const created = await owner.api.v3('/v3/auth/svc_codes', { amount: '0.01', currency: 'btc' });
    expect(created.statusCode).toBe(200);
    const path = '/v3/auth/svc_codes/redeem';
    const text = JSON.stringify({ code: created.json().code });
    const redeemed = await app.inject({
      method: 'PUT',
      url: path,
      payload: text,
      headers: v3Headers(redeemer.apiKey, redeemer.secret, path, text),
    });
    expect(redeemed.statusCode).toBe(200);
    for (const status of [['active'], 'canceled', undefined, 'no-such-status']) {
      const list = await redeemer.api.v3(
        '/v3/auth/svc_codes/redeemed-by-me',
        status === undefined ? {} : { status },
      );
      expect([status, list.statusCode, list.json().map((code: { id: number }) => code.id)]).toEqual([
        status,
        200,
        [created.json().id],
      ]);
    }
    // issued-by-me keeps its filter
    const issued = await owner.api.v3('/v3/auth/svc_codes/issued-by-me', { status: ['active'] });
    expect(issued.json()).toEqual([]);
  });
});
