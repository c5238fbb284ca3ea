import { afterAll, beforeAll, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { sendCall } from '../../src/cli/signed-call.js';
import type { App } from '../../src/http/typed.js';
import { accountWithKey } from '../support/accounts.js';
import { reference, secretBox, usePostgresTarget } from '../support/targets.js';

const target = usePostgresTarget();
let app: App;
let url: string;
let key: { apiKey: string; apiSecret: string };

beforeAll(async () => {
  app = await buildApp({ db: target.db(), reference, secretBox });
  url = await app.listen({ port: 0, host: '127.0.0.1' });
  const user = await accountWithKey(target.db(), ['read']);
  key = { apiKey: user.apiKey, apiSecret: user.secret };
});
afterAll(async () => {
  await app?.close();
});

it('signs private v3 calls (body or none), sends public ones unsigned, and shows refusals', async () => {
  const wallets = await sendCall(url, { method: 'POST', path: '/v3/auth/r/wallets', body: '{}' }, key);
  expect(wallets.status).toBe(200);
  expect(Array.isArray(JSON.parse(wallets.body))).toBe(true);
  const noBody = await sendCall(url, { method: 'POST', path: '/v3/auth/me', body: undefined }, key);
  expect(noBody.status).toBe(200);
  const markets = await sendCall(url, { method: 'GET', path: '/v3/markets', body: undefined }, undefined);
  expect(markets.status).toBe(200);
  const wrongKey = await sendCall(
    url,
    { method: 'POST', path: '/v3/auth/r/wallets', body: '{}' },
    { ...key, apiSecret: 'x'.repeat(40) },
  );
  expect(wrongKey.status).toBe(401);
  await expect(sendCall(url, { method: 'POST', path: '/v3/auth/me', body: '{}' }, undefined)).rejects.toThrow(
    /give a key/,
  );
});
