import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { paygateConfig } from '../../src/fiat/config.js';
import type { App } from '../../src/http/typed.js';
import { accountWithKey, credit } from '../support/accounts.js';
import { clientSignV2, clientSignV3, nextNonce, v3Headers } from '../support/signing.js';
import { reference, secretBox, type Target } from '../support/targets.js';

/** The HTTP contract, run in-process (inject) over PostgreSQL and over PGlite. */
export function httpContract(target: Target): void {
  describe(`HTTP API (${target.name})`, () => {
    let app: App;
    let user: Awaited<ReturnType<typeof accountWithKey>>;

    beforeAll(async () => {
      // No gateway (port 1 refuses): /v3/fees answers the reference file's fiat fees. With the default
      // URL a gateway running on this machine (npm start beside the tests) answered them instead.
      const paygate = paygateConfig({ PAYGATE_URL: 'http://127.0.0.1:1' });
      app = await buildApp({ db: target.db(), reference, secretBox, bodyLimit: 4096, paygate });
      user = await accountWithKey(target.db(), ['read', 'trade']);
      await credit(target.db(), user.account.id, 'btc', 15_000_000_000n);
    });
    afterAll(async () => {
      await app?.close();
    });

    const post = (path: string, body: string, headers: Record<string, string>) =>
      app.inject({ method: 'POST', url: path, payload: body, headers });

    it("accepts a signed request built independently of the server, with the client's own JSON spacing", async () => {
      const body = '{ "b": 1,  "a": [2, 3] }';
      const response = await post(
        '/v3/auth/r/wallets',
        body,
        v3Headers(user.apiKey, user.secret, '/v3/auth/r/wallets', body),
      );
      expect(response.statusCode).toBe(200);
      const wallets = response.json() as unknown[][];
      expect(wallets).toContainEqual(['exchange', 'BTC', 1.5, null, 1.5]);
      expect(wallets).toContainEqual(['exchange', 'UAH', 0, null, 0]);
      expect(wallets.every((w) => w.length === 5)).toBe(true);
    });

    it('refuses the same request after a one-byte change of body, path or nonce', async () => {
      const body = '{"a":1}';
      const nonce = nextNonce();
      const signed = v3Headers(user.apiKey, user.secret, '/v3/auth/r/wallets', body, nonce);
      const changedBody = await post('/v3/auth/r/wallets', '{"a":2}', signed);
      expect(changedBody.statusCode).toBe(401);
      expect(changedBody.json()).toEqual({
        error: { code: 2005, name: 'bad_signature', message: expect.any(String) },
      });
      const changedNonce = await post('/v3/auth/r/wallets', body, {
        ...signed,
        'svc-nonce': String(Number(nonce) + 1),
      });
      expect(changedNonce.json().error.name).toBe('bad_signature');
      const changedPath = await post('/v3/auth/me', body, signed);
      expect(changedPath.json().error.name).toBe('bad_signature');
      const original = await post('/v3/auth/r/wallets', body, signed);
      expect(original.statusCode).toBe(200);
    });

    it('signs a POST without body as {}', async () => {
      const nonce = nextNonce();
      const response = await app.inject({
        method: 'POST',
        url: '/v3/auth/me',
        headers: {
          'svc-nonce': nonce,
          'svc-apikey': user.apiKey,
          'svc-signature': clientSignV3(user.secret, '/v3/auth/me', nonce, '{}'),
        },
      });
      expect(response.statusCode).toBe(200);
      expect(response.json()).toMatchObject({
        email: user.account.email,
        svcid: user.account.svcid,
        two_factor: false,
        withdraw_confirmation: false,
        announcements: true,
        public_keys: {
          deposit_sdk_uah_public_key: 'pk_test_exchange_uah',
          deposit_sdk_usd_public_key: 'pk_test_exchange_usd',
          deposit_sdk_rub_public_key: 'pk_test_exchange_rub',
        },
      });
    });

    it('refuses a replayed, an older and a stale nonce', async () => {
      const headers = v3Headers(user.apiKey, user.secret, '/v3/auth/me', '{}');
      expect((await post('/v3/auth/me', '{}', headers)).statusCode).toBe(200);
      const replay = await post('/v3/auth/me', '{}', headers);
      expect(replay.statusCode).toBe(401);
      expect(replay.json().error).toMatchObject({ code: 2006, name: 'nonce_reused' });
      const older = String(Number(headers['svc-nonce']) - 5);
      const olderResponse = await post(
        '/v3/auth/me',
        '{}',
        v3Headers(user.apiKey, user.secret, '/v3/auth/me', '{}', older),
      );
      expect(olderResponse.json().error.name).toBe('nonce_reused');
      const stale = String(Date.now() + 3_600_000);
      const staleResponse = await post(
        '/v3/auth/me',
        '{}',
        v3Headers(user.apiKey, user.secret, '/v3/auth/me', '{}', stale),
      );
      expect(staleResponse.statusCode).toBe(401);
      expect(staleResponse.json().error).toMatchObject({ code: 2007, name: 'nonce_out_of_window' });
    });

    it('explains each credential failure with its own code', async () => {
      const good = v3Headers(user.apiKey, user.secret, '/v3/auth/me', '{}');
      const { 'svc-signature': _omit, ...missing } = good;
      const cases: [Record<string, string>, number, string][] = [
        [missing, 401, 'missing_credentials'],
        [{ ...good, 'svc-apikey': 'no-such-key' }, 401, 'unknown_key'],
      ];
      for (const [headers, status, name] of cases) {
        const response = await post('/v3/auth/me', '{}', headers);
        expect([response.statusCode, response.json().error.name]).toEqual([status, name]);
      }
      const tradeOnly = await accountWithKey(target.db(), ['trade']);
      const noScope = await post(
        '/v3/auth/me',
        '{}',
        v3Headers(tradeOnly.apiKey, tradeOnly.secret, '/v3/auth/me', '{}'),
      );
      expect([noScope.statusCode, noScope.json().error.name]).toEqual([403, 'scope_missing']);
      const disabled = await accountWithKey(target.db());
      await target.db().query('UPDATE api_keys SET enabled = false WHERE id = $1', [disabled.keyId]);
      const off = await post(
        '/v3/auth/me',
        '{}',
        v3Headers(disabled.apiKey, disabled.secret, '/v3/auth/me', '{}'),
      );
      expect([off.statusCode, off.json().error.code]).toEqual([401, 2009]);
    });

    it('refuses a key disabled or revoked after it was used (and cached) on the very next request', async () => {
      const owner = await accountWithKey(target.db(), ['read', 'trade']);
      await credit(target.db(), owner.account.id, 'btc', 100_000_000n);
      const me = () => post('/v3/auth/me', '{}', v3Headers(owner.apiKey, owner.secret, '/v3/auth/me', '{}'));
      const order = () => {
        const body = JSON.stringify({ symbol: 'btcuah', type: 'limit', amount: '-0.01', price: '2000000' });
        return post(
          '/v3/auth/w/order/submit',
          body,
          v3Headers(owner.apiKey, owner.secret, '/v3/auth/w/order/submit', body),
        );
      };
      expect((await me()).statusCode).toBe(200);
      expect((await order()).statusCode).toBe(200);
      // Disabled by another connection, as the operator CLI would: the app is not told.
      await target.db().query('UPDATE api_keys SET enabled = false WHERE id = $1', [owner.keyId]);
      for (const response of [await me(), await order()]) {
        expect([response.statusCode, response.json().error]).toEqual([
          401,
          { code: 2009, name: 'key_disabled', message: 'API key is disabled' },
        ]);
      }
      await target.db().query('UPDATE api_keys SET enabled = true WHERE id = $1', [owner.keyId]);
      expect((await me()).statusCode).toBe(200);
      await target.db().query('UPDATE api_keys SET revoked_at = now() WHERE id = $1', [owner.keyId]);
      const revoked = await order();
      expect([revoked.statusCode, revoked.json().error.message]).toEqual([401, 'API key is revoked']);
      const open = await target.db().query('SELECT 1 FROM orders WHERE account_id = $1', [owner.account.id]);
      expect(open.rows).toHaveLength(1);
    });

    it('refuses a duplicated credential header', async () => {
      const headers = v3Headers(user.apiKey, user.secret, '/v3/auth/me', '{}');
      const response = await app.inject({
        method: 'POST',
        url: '/v3/auth/me',
        payload: '{}',
        headers: { ...headers, 'svc-nonce': [headers['svc-nonce'], headers['svc-nonce']] },
      });
      expect([response.statusCode, response.json().error.name]).toEqual([400, 'duplicate_header']);
    });

    it('answers bad input with one error shape and writes nothing', async () => {
      const nonceOf = async () =>
        (
          await target
            .db()
            .query<{ n: number }>('SELECT last_nonce_v3 AS n FROM api_keys WHERE id = $1', [user.keyId])
        ).rows[0]!.n;
      const before = await nonceOf();
      const malformed = '{"a":';
      const bad = await post(
        '/v3/auth/me',
        malformed,
        v3Headers(user.apiKey, user.secret, '/v3/auth/me', malformed),
      );
      expect([bad.statusCode, bad.json().error.name]).toEqual([400, 'malformed_json']);
      const poisoned = '{"__proto__": {"admin": true}}';
      const proto = await post(
        '/v3/auth/me',
        poisoned,
        v3Headers(user.apiKey, user.secret, '/v3/auth/me', poisoned),
      );
      expect([proto.statusCode, proto.json().error.name]).toEqual([400, 'malformed_json']);
      // Nesting past 256 levels: refused in words, not with the stack overflow the reviver hit at 20,000.
      const deep = `${'['.repeat(1_000)}${']'.repeat(1_000)}`;
      const nested = await post(
        '/v3/auth/me',
        deep,
        v3Headers(user.apiKey, user.secret, '/v3/auth/me', deep),
      );
      expect([nested.statusCode, nested.json().error]).toEqual([
        400,
        {
          code: 1002,
          name: 'malformed_json',
          message: 'request body is not valid JSON: arrays and objects nest deeper than 256 levels',
        },
      ]);
      const huge = JSON.stringify({ pad: 'x'.repeat(5000) });
      const big = await post('/v3/auth/me', huge, v3Headers(user.apiKey, user.secret, '/v3/auth/me', huge));
      expect([big.statusCode, big.json().error.name]).toEqual([413, 'body_too_large']);
      // the refused body is read to its end and the connection kept (@platform/http-edge/refused-body)
      expect(big.headers.connection).not.toBe('close');
      expect(await nonceOf()).toBe(before);
      const array = await post('/v3/auth/me', '[]', v3Headers(user.apiKey, user.secret, '/v3/auth/me', '[]'));
      expect([array.statusCode, array.json().error.name]).toEqual([400, 'validation_failed']);
      const unknown = await app.inject({ method: 'GET', url: '/v3/exchange-rates/doge' });
      expect([unknown.statusCode, unknown.json().error.name]).toEqual([404, 'unknown_currency']);
      const noRoute = await app.inject({ method: 'GET', url: '/v3/nothing' });
      expect(noRoute.json()).toEqual({
        error: { code: 1005, name: 'not_found', message: expect.any(String) },
      });
      const text = await app.inject({
        method: 'POST',
        url: '/v3/auth/me',
        payload: 'x',
        headers: { 'content-type': 'text/plain' },
      });
      expect([text.statusCode, text.json().error.name]).toEqual([415, 'unsupported_media_type']);
    });

    it('serves v2 members/me signed the Peatio way, with and without .json', async () => {
      for (const uri of ['/api/v2/members/me', '/api/v2/members/me.json']) {
        const params = { access_key: user.apiKey, tonce: nextNonce() };
        const signature = clientSignV2(user.secret, 'GET', uri, params);
        const response = await app.inject({ method: 'GET', url: uri, query: { ...params, signature } });
        expect(response.statusCode).toBe(200);
        const member = response.json();
        expect(member).toMatchObject({ email: user.account.email, activated: true });
        expect(member.accounts).toContainEqual({ currency: 'btc', balance: '1.5', locked: '0.0' });
        const replay = await app.inject({ method: 'GET', url: uri, query: { ...params, signature } });
        expect([replay.statusCode, replay.json().error.code]).toEqual([401, 2006]);
      }
      const params = { access_key: user.apiKey, tonce: nextNonce() };
      const tampered = clientSignV2(user.secret, 'GET', '/api/v2/members/me', { ...params, extra: '1' });
      const bad = await app.inject({
        method: 'GET',
        url: '/api/v2/members/me',
        query: { ...params, signature: tampered },
      });
      expect([bad.statusCode, bad.json().error.code]).toEqual([401, 2005]);
      const missing = await app.inject({ method: 'GET', url: '/api/v2/members/me', query: params });
      expect([missing.statusCode, missing.json().error.code]).toEqual([401, 2001]);
      const unknown = await app.inject({
        method: 'GET',
        url: '/api/v2/members/me',
        query: { ...params, access_key: 'nope', signature: 'ab' },
      });
      expect(unknown.json().error.code).toBe(2008);
    });

    it('serves public reference data in the spec shapes', async () => {
      const time = (await app.inject('/v3/timestamp')).json();
      expect(time.timestamp_miliseconds - time.timestamp * 1000).toBeLessThan(1000);
      const v2time = await app.inject('/api/v2/timestamp');
      expect(v2time.body).toMatch(/^\d{10}$/);
      const currencies = (await app.inject('/v3/currencies')).json();
      expect(currencies.find((c: { code: string }) => c.code === 'xrp')).toMatchObject({
        has_memo: true,
        coin: true,
        precision: { real: 6, trade: 4 },
        icons: {
          std: expect.any(String),
          xl: expect.any(String),
          png_2x: expect.any(String),
          png_3x: expect.any(String),
        },
      });
      expect(currencies.find((c: { code: string }) => c.code === 'btc').explorer_link).toContain('#{txid}');
      const markets = (await app.inject('/v3/markets')).json();
      expect(markets).toContainEqual({
        id: 'btcuah',
        base_unit: 'btc',
        quote_unit: 'uah',
        base_precision: 6,
        quote_precision: 0,
        display_precision: 1,
        price_change: 0,
      });
      const fees = (await app.inject('/v3/fees')).json();
      expect(fees.find((f: { code: string }) => f.code === 'btc')).toEqual({
        code: 'btc',
        category: 'coin',
        deposit_fees: [],
        withdraw_fees: [{ type: 'fixed', asset: { amount: 0.0005, currency: 'btc', to_usd: '18.63' } }],
        min_deposit: { amount: 0.0001, currency: 'btc', to_usd: '3.73' },
        min_withdraw: { amount: 0.001, currency: 'btc', to_usd: '37.25' },
      });
      expect(fees).toContainEqual({
        code: 'payment_card',
        category: 'uah',
        deposit_fees: [{ type: 'percent', amount: '1.0' }],
        withdraw_fees: [{ type: 'percent', amount: '1.5' }],
      });
      const rates = (await app.inject('/v3/exchange-rates')).json();
      expect(rates).toHaveLength(reference.currencies.length);
      const usdt = (await app.inject('/v3/exchange-rates/USDT')).json();
      expect(usdt).toMatchObject({
        currency: 'usdt',
        usd: 1,
        btc: expect.any(Number),
        uah: expect.any(Number),
      });
    });

    it('serves health and the OpenAPI document', async () => {
      expect((await app.inject('/health')).json()).toEqual({ status: 'ok', storage: target.name });
      const doc = (await app.inject('/docs/json')).json();
      expect(Object.keys(doc.paths)).toEqual(
        expect.arrayContaining(['/v3/auth/r/wallets', '/api/v2/members/me', '/v3/fees']),
      );
      expect((await app.inject('/docs')).statusCode).toBeLessThan(400);
    });
  });
}
