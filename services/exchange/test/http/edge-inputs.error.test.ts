/**
 * Inputs the OpenAPI fuzz (api.fuzz.test.ts) found answered with a 500 or in Fastify's own error
 * shape, pinned here so that each stays fixed whatever seed the fuzz draws.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import type { App } from '../../src/http/typed.js';
import { accountWithKey } from '../support/accounts.js';
import { v3Headers } from '../support/signing.js';
import { reference, secretBox, usePostgresTarget } from '../support/targets.js';

const target = usePostgresTarget();
let app: App;
let user: Awaited<ReturnType<typeof accountWithKey>>;

beforeAll(async () => {
  app = await buildApp({ db: target.db(), reference, secretBox });
  user = await accountWithKey(target.db(), ['read', 'trade', 'withdraw']);
});
afterAll(async () => {
  await app?.close();
});

const signedPost = (path: string, body: string) =>
  app.inject({
    method: 'POST',
    url: path,
    payload: body,
    headers: v3Headers(user.apiKey, user.secret, path, body),
  });

it.each([
  ['/v3/auth/r/orders/hist', '{"start":1e19}'],
  ['/v3/auth/r/orders/hist', '{"end":10000000000000000000}'],
  ['/v3/auth/r/orders/btcuah/hist', '{"start":-1}'],
  ['/v3/order/cancel', '{"order_id":10000000000000000000}'],
  ['/v3/order/cancel/multi', '{"order_ids":[1e19]}'],
  ['/v3/auth/fund_sources/delete', '{"id":1e19}'],
  ['/v3/auth/r/orders/btcuah', '{"before_id":10000000000000000000}'],
  // Strings Ajv coerces to Infinity, past the schema's maximum (http-edge storable-input.ts).
  ['/v3/auth/r/orders', `{"before_id":"${'9'.repeat(700)}"}`],
  ['/v3/auth/r/orders/hist', '{"start":"1e400"}'],
  ['/v3/order/cancel', '{"order_id":"-1e400"}'],
])('POST %s %s is a 400 validation_failed, not a 500', async (path, body) => {
  const response = await signedPost(path, body);
  expect(response.statusCode).toBe(400);
  expect(response.json()).toEqual({
    error: { code: 1001, name: 'validation_failed', message: expect.any(String) },
  });
});

it('answers a path parameter of 600 characters with 414 in the service error shape', async () => {
  const response = await app.inject({ method: 'GET', url: `/v3/book/${'a'.repeat(600)}` });
  expect(response.statusCode).toBe(414);
  expect(response.json()).toEqual({
    error: { code: 1010, name: 'uri_too_long', message: 'a path parameter is longer than 500 characters' },
  });
});

it('answers a path parameter that is not UTF-8 with 400 in the service error shape', async () => {
  const response = await app.inject({ method: 'GET', url: '/v3/book/%FF' });
  expect(response.statusCode).toBe(400);
  expect(response.json()).toEqual({
    error: { code: 1001, name: 'validation_failed', message: 'the URL is not valid (bad percent-encoding)' },
  });
});

it('answers a known path with another method 405 with allow, an unknown path 404, in the error shape', async () => {
  const wrong = await app.inject({ method: 'GET', url: '/v3/auth/r/wallets' });
  expect(wrong.statusCode).toBe(405);
  expect(wrong.headers.allow).toBe('POST');
  expect(wrong.json()).toEqual({
    error: {
      code: 1013,
      name: 'method_not_allowed',
      message: 'GET is not allowed on /v3/auth/r/wallets; allowed: POST',
    },
  });
  const post = await app.inject({ method: 'POST', url: '/v3/markets?x=1' });
  expect([post.statusCode, post.headers.allow]).toEqual([405, 'GET, HEAD']);
  const unknown = await app.inject({ method: 'GET', url: '/v3/nothing' });
  expect([unknown.statusCode, unknown.json().error.name]).toEqual([404, 'not_found']);
});

it('has a landing page at / linking the docs and health', async () => {
  const page = await app.inject({ method: 'GET', url: '/' });
  expect(page.statusCode).toBe(200);
  expect(page.headers['content-type']).toContain('text/html');
  for (const href of ['/docs', '/health']) expect(page.body).toContain(`href="${href}"`);
});
