import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { v2Auth } from '../../src/auth/authenticate.js';
import type { App } from '../../src/http/typed.js';
import { accountWithKey } from '../support/accounts.js';
import { clientSignV2, nextNonce } from '../support/signing.js';
import { reference, secretBox, usePostgresTarget } from '../support/targets.js';

// v2 order entry (POST with a form body) arrives with the trading issue; this checks the signing of
// such requests now, on a probe route added to the real app.
const target = usePostgresTarget();

describe('v2 signed form POST', () => {
  let app: App;
  let user: Awaited<ReturnType<typeof accountWithKey>>;
  beforeAll(async () => {
    app = await buildApp({ db: target.db(), reference, secretBox });
    const auth = { db: target.db(), secretBox, now: Date.now, nonceWindowMs: 300_000 };
    app.post('/api/v2/probe', { preValidation: v2Auth(auth, 'trade') }, async (request) => ({
      account: request.auth?.accountId,
    }));
    user = await accountWithKey(target.db(), ['read', 'trade']);
  });
  afterAll(async () => {
    await app?.close();
  });

  const form = (params: Record<string, string>) =>
    app.inject({
      method: 'POST',
      url: '/api/v2/probe',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams(params).toString(),
    });

  it('accepts parameters and signature in the form body, values signed unescaped', async () => {
    const params = {
      access_key: user.apiKey,
      tonce: nextNonce(),
      market: 'btcuah',
      side: 'buy',
      note: 'a b&c',
    };
    const response = await form({
      ...params,
      signature: clientSignV2(user.secret, 'POST', '/api/v2/probe', params),
    });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ account: user.account.id });
  });

  it('refuses a changed value, a duplicated parameter and a key without the scope', async () => {
    const params = { access_key: user.apiKey, tonce: nextNonce(), volume: '1.5' };
    const signature = clientSignV2(user.secret, 'POST', '/api/v2/probe', params);
    const changed = await form({ ...params, volume: '1.6', signature });
    expect([changed.statusCode, changed.json().error.code]).toEqual([401, 2005]);
    const duplicated = await app.inject({
      method: 'POST',
      url: '/api/v2/probe',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: `${new URLSearchParams({ ...params, signature }).toString()}&volume=9`,
    });
    expect([duplicated.statusCode, duplicated.json().error.name]).toEqual([400, 'validation_failed']);
    const readOnly = await accountWithKey(target.db(), ['read']);
    const own = { access_key: readOnly.apiKey, tonce: nextNonce(), id: randomBytes(2).toString('hex') };
    const noScope = await form({
      ...own,
      signature: clientSignV2(readOnly.secret, 'POST', '/api/v2/probe', own),
    });
    expect([noScope.statusCode, noScope.json().error.code]).toEqual([403, 2010]);
  });
});
