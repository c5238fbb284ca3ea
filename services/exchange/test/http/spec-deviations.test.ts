/**
 * Where the exchange differed from ../shared/spec/exchange-api.md (issue 28): the executed-orders
 * list, the status filter of redeemed-by-me, and signed requests whose query string or signature case
 * the signature did not pin down.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { CODE_HISTORY_ID_OFFSET } from '../../src/codes/history.js';
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

describe('assets history: item ids unique across sources, each leading to its details', () => {
  it('a transfer code item never takes a withdrawal id; its id leads to svc_codes/details', async () => {
    const owner = await trader();
    const created = await owner.api.v3('/v3/auth/svc_codes', { amount: '0.01', currency: 'btc' });
    expect(created.statusCode).toBe(200);
    // Before, the item took the code id itself, which a withdrawal of the account could have too (id 1 was both).
    const codeId = created.json().id as number;
    const items = (await owner.api.v3('/v3/auth/assets-history/withdraws', {})).json().items as {
      id: number;
      destination: string;
    }[];
    const item = items.find((i) => i.destination === 'svc_code')!;
    expect(item.id).toBe(CODE_HISTORY_ID_OFFSET + codeId);
    expect(item.id).toBeLessThanOrEqual(2_147_483_647);
    const details = await owner.api.v3('/v3/auth/svc_codes/details', {
      id: item.id - CODE_HISTORY_ID_OFFSET,
    });
    expect([details.statusCode, details.json().id]).toEqual([200, codeId]);
    const { rows } = await target
      .db()
      .query<{ n: number }>('SELECT count(*)::int AS n FROM withdrawals WHERE id = $1', [item.id]);
    expect(rows[0]!.n).toBe(0);
  });
});

describe('signed routes sign what is read and refuse the rest', () => {
  it('v3: a query string on a correctly signed request is 401 bad_signature, and writes nothing', async () => {
    const user = await trader();
    const path = '/v3/auth/svc_codes';
    const text = '{"amount":"0.01","currency":"btc"}';
    // (inject drops a bare `?`; over a socket it arrives and is refused too)
    for (const query of ['?amount=1', '?currency=eth', '?x', '?a=1&a=2']) {
      const response = await app.inject({
        method: 'POST',
        url: `${path}${query}`,
        payload: text,
        headers: v3Headers(user.apiKey, user.secret, path, text),
      });
      expect([query, response.statusCode, response.json().error?.name]).toEqual([
        query,
        401,
        'bad_signature',
      ]);
    }
    const issued = await user.api.v3('/v3/auth/svc_codes/issued-by-me', {});
    expect(issued.json()).toEqual([]);
  });

  it('v3: an upper-case hex signature is 401 bad_signature; the same in lower case passes', async () => {
    const user = await trader();
    const path = '/v3/auth/me';
    const headers = v3Headers(user.apiKey, user.secret, path, '{}');
    const upper = await app.inject({
      method: 'POST',
      url: path,
      payload: '{}',
      headers: { ...headers, 'svc-signature': headers['svc-signature'].toUpperCase() },
    });
    expect([upper.statusCode, upper.json().error.name]).toEqual([401, 'bad_signature']);
    const lower = await app.inject({ method: 'POST', url: path, payload: '{}', headers });
    expect(lower.statusCode).toBe(200);
  });

  it('v2: every query parameter is signed; one in both query and form body is refused; upper-case hex is refused', async () => {
    const user = await trader();
    const signed = (verb: string, uri: string, params: Record<string, string>) => {
      const all = { ...params, access_key: user.apiKey, tonce: nextNonce() };
      return { ...all, signature: clientSignV2(user.secret, verb, uri, all) };
    };
    const uri = '/api/v2/members/me';
    const good = new URLSearchParams(signed('GET', uri, {}));
    expect((await app.inject({ method: 'GET', url: `${uri}?${good}` })).statusCode).toBe(200);
    const extra = new URLSearchParams(signed('GET', uri, {}));
    extra.append('unsigned', '1');
    const unsigned = await app.inject({ method: 'GET', url: `${uri}?${extra}` });
    expect([unsigned.statusCode, unsigned.json().error.name]).toEqual([401, 'bad_signature']);
    const upperParams = signed('GET', uri, {});
    upperParams.signature = upperParams.signature.toUpperCase();
    const upper = await app.inject({ method: 'GET', url: `${uri}?${new URLSearchParams(upperParams)}` });
    expect([upper.statusCode, upper.json().error.name]).toEqual([401, 'bad_signature']);

    // A POST whose body is signed, with the same parameter again in the query, unsigned.
    const form = signed('POST', '/api/v2/orders', {
      market: 'btcuah',
      side: 'buy',
      volume: '0.1',
      price: '1000',
    });
    const both = await app.inject({
      method: 'POST',
      url: '/api/v2/orders?volume=0.2',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams(form).toString(),
    });
    expect([both.statusCode, both.json().error.name]).toEqual([400, 'validation_failed']);
    const active = await user.api.v3('/v3/auth/r/orders', {});
    expect(active.json()).toEqual([]);
  });
});
