/**
 * What the OpenAPI fuzz (api.fuzz.test.ts) found, pinned here: router failures answered in Fastify's
 * own shape (`{statusCode, code, error, message}`) instead of the gateway's `{"error": {...}}`, and a
 * NUL byte in an invoice id reaching PostgreSQL (a 500).
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { SANDBOX_SECRET, testCatalog } from '../support/catalog.js';
import { type RunningGateway, startGateway } from '../support/gateway.js';
import { merchantPost } from '../support/merchant.js';
import { usePostgresTarget } from '../support/targets.js';

const target = usePostgresTarget();
let gateway: RunningGateway;

beforeAll(async () => {
  gateway = await startGateway({ db: target.db(), catalog: testCatalog(), startWorker: false });
});
afterAll(async () => {
  await gateway?.close();
});

it('answers a path parameter of 600 characters with 414 uri_too_long', async () => {
  const response = await fetch(`${gateway.url}/assets/methods/${'a'.repeat(600)}.svg`);
  expect(response.status).toBe(414);
  expect(await response.json()).toEqual({
    error: { code: 1010, name: 'uri_too_long', message: 'a path parameter is longer than 500 characters' },
  });
});

it('answers a path parameter that is not UTF-8 with 400 validation_failed', async () => {
  const response = await fetch(`${gateway.url}/assets/methods/%FF.svg`);
  expect(response.status).toBe(400);
  expect(await response.json()).toEqual({
    error: { code: 1001, name: 'validation_failed', message: 'the URL is not valid (bad percent-encoding)' },
  });
});

it('answers the hosted page for an invoice id with a NUL byte as an unknown invoice (404 page), not a 500', async () => {
  const response = await fetch(`${gateway.url}/public-api/payment-invoices/page?invoice_id=%00&token=x`);
  expect(response.status).toBe(404);
  expect(response.headers.get('content-type')).toMatch(/^text\/html/);
});

// PostgreSQL text cannot hold U+0000: http-edge storable-input.ts refuses it before any query.
it.each([
  ['/merchant-api/invoices/status', { reference_id: '\u0000' }],
  ['/merchant-api/payouts/status', { reference_id: 'a\u0000b' }],
  [
    '/merchant-api/payouts',
    {
      reference_id: 'nul-in-a-field',
      service: 'payment_card_uah',
      currency: 'UAH',
      amount: '100.00',
      fields: { card_number: '4242\u00004242' },
    },
  ],
])(
  'answers %s with a NUL character in a body string as 400 validation_failed, not a 500',
  async (path, body) => {
    const response = await merchantPost(gateway.url, path, body, SANDBOX_SECRET);
    expect(response.status).toBe(400);
    expect(response.json).toEqual({
      error: {
        code: 1001,
        name: 'validation_failed',
        message: expect.stringContaining('must not contain a NUL character'),
      },
    });
  },
);

it('answers a body over BODY_LIMIT with 413 body_too_large without closing the connection', async () => {
  const response = await fetch(`${gateway.url}/merchant-api/invoices/status`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ reference_id: 'x'.repeat(100_000) }),
  });
  expect(response.status).toBe(413);
  expect(((await response.json()) as { error: { name: string } }).error.name).toBe('body_too_large');
  // the refused body is read to its end instead of the socket being reset (@platform/http-edge/refused-body)
  expect(response.headers.get('connection')).not.toBe('close');
});

it('answers a known path with another method 405 with allow, an unknown path 404, in the error shape', async () => {
  const wrong = await fetch(`${gateway.url}/public-api/payment-invoices`);
  expect(wrong.status).toBe(405);
  expect(wrong.headers.get('allow')).toBe('POST');
  expect(await wrong.json()).toEqual({
    error: {
      code: 1013,
      name: 'method_not_allowed',
      message: 'GET is not allowed on /public-api/payment-invoices; allowed: POST',
    },
  });
  const unknown = await fetch(`${gateway.url}/public-api/nothing`);
  expect(unknown.status).toBe(404);
  expect(((await unknown.json()) as { error: { name: string } }).error.name).toBe('not_found');
});

it('has a landing page at / linking the docs and health', async () => {
  const page = await fetch(`${gateway.url}/`);
  expect(page.status).toBe(200);
  const html = await page.text();
  for (const href of ['/docs', '/health']) expect(html).toContain(`href="${href}"`);
});
