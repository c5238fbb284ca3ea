/**
 * Amounts that are not what they look like (issue 28, item 1), on the gateway's invoices, signed payouts
 * and prerequests: a JSON number or a plain decimal string, valued by its exact text through
 * @platform/decimal-text. A value of the wrong JSON type is 400 validation_failed (schema), a string that
 * is no plain decimal or has more decimals than the currency 400 invalid_amount (field `amount`), the
 * gateway's documented errors; nothing is created.
 */
import { randomUUID } from 'node:crypto';
import { seedName, testSeeds } from '@platform/testkit/seeds';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SANDBOX_SECRET, testCatalog } from '../support/catalog.js';
import { type RunningGateway, startGateway } from '../support/gateway.js';
import { formSignature } from '../support/invoice-form.js';
import { signedHeaders } from '../support/merchant.js';
import { usePostgresTarget } from '../support/targets.js';

const target = usePostgresTarget();
let gateway: RunningGateway;

beforeAll(async () => {
  gateway = await startGateway({ db: target.db(), catalog: testCatalog(), startWorker: false });
});
afterAll(async () => {
  await gateway?.close();
});

/** A body sent exactly as written (a JSON number keeps its text); signed for the merchant API. */
async function post(path: string, text: string, signed: boolean) {
  const response = await fetch(`${gateway.url}${path}`, {
    method: 'POST',
    headers: signed ? signedHeaders(SANDBOX_SECRET, text) : { 'content-type': 'application/json' },
    body: text,
  });
  // biome-ignore lint/suspicious/noExplicitAny: the tests read nested JSON ad hoc and assert its shape
  return { status: response.status, json: (await response.json()) as Record<string, any> };
}

/**
 * An invoice whose amount is sent exactly as written, with the merchant's form signature (sec-token,
 * README "Signed invoice forms") over `signedAmount`, the decimal the merchant means (an amount the
 * gateway refuses is refused before the signature is looked at).
 */
const invoice = (amount: string, signedAmount = '0', reference = `ref-${randomUUID()}`) => {
  const { expires, signature } = formSignature({
    public_key: 'pk_test_exchange_uah',
    reference_id: reference,
    currency: 'UAH',
    amount: signedAmount,
    service: 'payment_card_uah_hpp',
  });
  return post(
    '/public-api/payment-invoices',
    `{"public_key":"pk_test_exchange_uah","reference_id":"${reference}","service":"payment_card_uah_hpp","currency":"uah","amount":${amount},"expires":${expires},"signature":"${signature}"}`,
    false,
  );
};
const payout = (amount: string, reference = `ref-${randomUUID()}`) =>
  post(
    '/merchant-api/payouts',
    `{"reference_id":"${reference}","service":"payment_card_uah","currency":"UAH","amount":${amount},"fields":{"card_number":"4242424242424242"}}`,
    true,
  );
const prerequest = (amount: string) =>
  post(
    '/public-api/payout-prerequest',
    `{"public_key":"pk_test_exchange_uah","currency":"uah","amount":${amount}}`,
    false,
  );

async function rows(): Promise<number> {
  const { rows } = await target
    .db()
    .query<{ n: number }>('SELECT (SELECT count(*) FROM invoices) + (SELECT count(*) FROM payouts) AS n');
  return Number(rows[0]!.n);
}

/** Wrong JSON types (no coercion of `true` or `[100]` into 100) and strings past 32 characters: the schema. */
const WRONG_TYPES = [
  'true',
  'false',
  '[100]',
  '["100"]',
  '{"value":100}',
  'null',
  `"${'9'.repeat(400)}"`,
  '9'.repeat(400),
];
/** Strings that are no plain decimal, and over-precise amounts: invalid_amount. */
const NOT_DECIMALS = [
  '"0x64"',
  '"0b1100100"',
  '"0o144"',
  '"1e2"',
  '"100e0"',
  '" 100"',
  '"100 "',
  '"+100"',
  '".5"',
  '"100."',
  '"１００"',
  '"Infinity"',
  '"100.0000000000000001"',
  '100.0000000000000001',
  '"100.001"',
  '1e999999999',
];

describe('gateway amounts', () => {
  for (const [name, send] of [
    ['invoice', invoice],
    ['signed payout', payout],
    ['payout prerequest', prerequest],
  ] as const) {
    it(`${name}: a wrong JSON type is validation_failed, a non-decimal or over-precise amount invalid_amount`, async () => {
      const before = await rows();
      for (const amount of WRONG_TYPES) {
        const response = await send(amount);
        expect([amount, response.status, response.json.error?.name]).toEqual([
          amount,
          400,
          'validation_failed',
        ]);
      }
      for (const amount of NOT_DECIMALS) {
        const response = await send(amount);
        expect([amount, response.status, response.json.error?.name, response.json.error?.field]).toEqual([
          amount,
          400,
          'invalid_amount',
          'amount',
        ]);
      }
      expect(await rows()).toBe(before);
    });
  }

  it('an invoice of 100.0000000000000001 is refused, of 100.50 and 1.005e2 is exactly 100.50', async () => {
    expect((await invoice('100.0000000000000001')).json.error.name).toBe('invalid_amount');
    for (const amount of ['100.50', '"100.50"', '1.005e2']) {
      const created = await invoice(amount, '100.50');
      expect([amount, created.status, created.json.data?.amount]).toEqual([amount, 201, '100.50']);
    }
  });

  for (const seed of testSeeds([2802]))
    it(`property: an accepted payout's amount is exactly the decimal text sent: ${seedName(seed)}`, async () => {
      const digits = (min: number, max: number) =>
        fc.array(fc.constantFrom(...'0123456789'), { minLength: min, maxLength: max }).map((d) => d.join(''));
      const decimal = fc
        .tuple(digits(1, 5), fc.option(digits(1, 4), { nil: undefined }))
        .map(
          ([whole, fraction]) =>
            `${whole.replace(/^0+(?=\d)/, '')}${fraction === undefined ? '' : `.${fraction}`}`,
        );
      const input = fc.oneof(
        decimal.map((text) => ({ json: text, text })),
        decimal.map((text) => ({ json: `"${text}"`, text })),
        decimal.map((text) => ({ json: `"0x${text}"`, text: undefined })),
        decimal.map((text) => ({ json: `" ${text}"`, text: undefined })),
        decimal.map((text) => ({ json: `[${text}]`, text: undefined })),
      );
      let accepted = 0;
      await fc.assert(
        fc.asyncProperty(input, async ({ json, text }) => {
          const response = await payout(json);
          if (response.status === 201 || response.status === 200) {
            accepted += 1;
            expect(text).toBeDefined();
            const [whole = '', fraction = ''] = text!.split('.');
            expect(fraction.replace(/0+$/, '').length).toBeLessThanOrEqual(2);
            const expected = `${BigInt(whole)}.${fraction.padEnd(2, '0').slice(0, 2)}`;
            expect([json, response.json.data.amount]).toEqual([json, expected]);
          } else {
            // amount_out_of_limits is a 422
            expect([400, 422]).toContain(response.status);
            expect(['validation_failed', 'invalid_amount', 'amount_out_of_limits']).toContain(
              response.json.error.name,
            );
          }
        }),
        { seed, numRuns: 40 },
      );
      expect(accepted).toBeGreaterThan(0);
    });
});

describe('merchant signatures', () => {
  it('an upper-case hex signature of a valid payout is refused (lower-case hex only), nothing created', async () => {
    const before = await rows();
    const text = `{"reference_id":"ref-${randomUUID()}","service":"payment_card_uah","currency":"UAH","amount":"100.00","fields":{"card_number":"4242424242424242"}}`;
    const headers = signedHeaders(SANDBOX_SECRET, text);
    const response = await fetch(`${gateway.url}/merchant-api/payouts`, {
      method: 'POST',
      headers: { ...headers, 'x-paygate-signature': headers['x-paygate-signature']!.toUpperCase() },
      body: text,
    });
    expect(response.status).toBe(401);
    expect(await rows()).toBe(before);
  });
});
