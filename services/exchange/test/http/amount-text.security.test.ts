/**
 * Amounts, prices and ids that are not what they look like (issue 28, item 1). Every money route reads
 * its amounts through @platform/decimal-text: a JSON number or a plain decimal string, valued by its
 * text; anything else is 400 validation_failed, excess decimals too_many_decimals, and nothing moves.
 */
import { seedName, testSeeds } from '@platform/testkit/seeds';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { accountWithKey, credit } from '../support/accounts.js';
import { v3Headers } from '../support/signing.js';
import { reference, usePostgresTarget } from '../support/targets.js';
import { balanceMap, useWalletApp } from '../wallet/support.js';

const target = usePostgresTarget();
const w = useWalletApp(target);
const BTC_ADDRESS = 'bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq';
const BTC_LEDGER = reference.ledgerPrecision('btc');

type User = Awaited<ReturnType<typeof accountWithKey>>;

/** A signed v3 POST of a body sent exactly as written (a JSON number keeps its text). */
function post(user: User, path: string, text: string) {
  return w.app().inject({
    method: 'POST',
    url: path,
    payload: text,
    headers: v3Headers(user.apiKey, user.secret, path, text),
  });
}

async function funded(): Promise<User> {
  const user = await accountWithKey(w.db(), ['read', 'trade', 'withdraw']);
  await credit(w.db(), user.account.id, 'btc', 5n * 10n ** BigInt(BTC_LEDGER)); // 5 btc
  await credit(w.db(), user.account.id, 'uah', 10n ** 12n); // 1 000 000 uah
  return user;
}

async function stateOf(user: User) {
  const { rows } = await w.db().query<{ n: string }>(
    `SELECT (SELECT count(*) FROM orders WHERE account_id = $1)
          + (SELECT count(*) FROM withdrawals WHERE account_id = $1)
          + (SELECT count(*) FROM svc_codes WHERE owner_id = $1)
          + (SELECT count(*) FROM deposits WHERE account_id = $1) AS n`,
    [user.account.id],
  );
  return { balances: await balanceMap(w.db(), user.account.id), rows: rows[0]!.n };
}

/** Each JSON text an amount must never be: the requests and their relatives. */
const NOT_AMOUNTS = [
  '"0x1"',
  '"0b1"',
  '"0o1"',
  '"1e0"',
  '"1E0"',
  '"1e-8"',
  '1e999999999',
  'true',
  '[1]',
  '["1"]',
  '{"value":1}',
  'null',
  '" 1"',
  '"1 "',
  '"+1"',
  '".5"',
  '"5."',
  '"1,5"',
  '"１"',
  '"١"',
  '"Infinity"',
  '"NaN"',
  '""',
  '"--1"',
  '"0x1p0"',
];

const ROUTES: [string, string, (amount: string) => string][] = [
  [
    'withdraw',
    '/v3/auth/withdraw',
    (a) => `{"withdraw_type":"btc","amount":${a},"address":"${BTC_ADDRESS}"}`,
  ],
  ['transfer code', '/v3/auth/svc_codes', (a) => `{"amount":${a},"currency":"btc"}`],
  [
    'order amount',
    '/v3/auth/w/order/submit',
    (a) => `{"symbol":"btcuah","type":"limit","amount":${a},"price":"1000"}`,
  ],
  [
    'order price',
    '/v3/auth/w/order/submit',
    (a) => `{"symbol":"btcuah","type":"limit","amount":"0.5","price":${a}}`,
  ],
  [
    'stop price',
    '/v3/auth/w/order/submit',
    (a) => `{"symbol":"btcuah","type":"limit_stop_loss","amount":"0.5","price":"1000","stop_price":${a}}`,
  ],
  ['fiat deposit', '/v3/auth/deposit', (a) => `{"currency":"uah","amount":${a}}`],
];

describe('an amount that is not a decimal number moves nothing', () => {
  for (const [name, path, body] of ROUTES) {
    it(`${name} (${path}) refuses each with 400 validation_failed`, async () => {
      const user = await funded();
      const before = await stateOf(user);
      for (const amount of NOT_AMOUNTS) {
        const response = await post(user, path, body(amount));
        expect([amount, response.statusCode, response.json().error?.name]).toEqual([
          amount,
          400,
          'validation_failed',
        ]);
      }
      expect(await stateOf(user)).toEqual(before);
    });
  }
});

describe('an over-precise amount is too_many_decimals, never rounded (string or JSON number)', () => {
  const cases: [string, string][] = [
    ['/v3/auth/withdraw', `{"withdraw_type":"btc","amount":%,"address":"${BTC_ADDRESS}"}`],
    ['/v3/auth/svc_codes', '{"amount":%,"currency":"btc"}'],
  ];
  it.each(['0.99999999999999999', '"0.99999999999999999"', '0.123456789', '"0.000000001"'])(
    'withdraw and transfer code of %s BTC',
    async (amount) => {
      const user = await funded();
      const before = await stateOf(user);
      for (const [path, body] of cases) {
        const response = await post(user, path, body.replace('%', amount));
        expect([path, response.statusCode, response.json().error?.name]).toEqual([
          path,
          400,
          'too_many_decimals',
        ]);
      }
      expect(await stateOf(user)).toEqual(before);
    },
  );

  it.each(['"0.100000000000000001"', '0.100000000000000001', '"0.1000001"'])(
    'an order of %s on btcuah (6 decimals)',
    async (amount) => {
      const user = await funded();
      const before = await stateOf(user);
      const response = await post(
        user,
        '/v3/auth/w/order/submit',
        `{"symbol":"btcuah","type":"limit","amount":${amount},"price":"1000"}`,
      );
      expect([response.statusCode, response.json().error?.name]).toEqual([400, 'too_many_decimals']);
      expect(await stateOf(user)).toEqual(before);
    },
  );

  it.each(['"100.0000000000000001"', '100.0000000000000001', '"100.001"'])(
    'a fiat deposit of %s UAH (2 decimals)',
    async (amount) => {
      const user = await funded();
      const before = await stateOf(user);
      const response = await post(user, '/v3/auth/deposit', `{"currency":"uah","amount":${amount}}`);
      expect([response.statusCode, response.json().error?.name]).toEqual([400, 'too_many_decimals']);
      expect(await stateOf(user)).toEqual(before);
    },
  );
});

describe('a JSON number counts by its exact value in any notation JSON allows', () => {
  it('1e-8 (as JSON.stringify writes 0.00000001) escrows one satoshi; 1E-9 is too_many_decimals', async () => {
    const user = await funded();
    const before = await balanceMap(w.db(), user.account.id);
    const one = await post(user, '/v3/auth/svc_codes', '{"amount":1e-8,"currency":"btc"}');
    expect([one.statusCode, one.json().amount]).toEqual([200, '0.00000001']);
    const after = await balanceMap(w.db(), user.account.id);
    expect(before.btc![0] - after.btc![0]).toBe(10n ** BigInt(BTC_LEDGER - 8));
    const less = await post(user, '/v3/auth/svc_codes', '{"amount":1E-9,"currency":"btc"}');
    expect([less.statusCode, less.json().error.name]).toEqual([400, 'too_many_decimals']);
  });

  it('a huge amount (1e400, 300 digits) is a 400 on every route and moves nothing', async () => {
    const user = await funded();
    const before = await stateOf(user);
    for (const [name, path, body] of ROUTES) {
      // 92233720368.54775807 BTC fits int8 at 8 decimals, not in the ledger's 10.
      for (const amount of [
        '1e400',
        `"${'9'.repeat(300)}"`,
        `${'9'.repeat(300)}`,
        '-1e400',
        '"92233720368.54775807"',
      ]) {
        const response = await post(user, path, body(amount));
        expect([name, amount, response.statusCode]).toEqual([name, amount, 400]);
      }
    }
    expect(await stateOf(user)).toEqual(before);
  });
});

describe('hostile bodies on the money routes: repeated keys, __proto__, zero and negative amounts', () => {
  it('each is a 400 in the error shape and moves nothing', async () => {
    const user = await funded();
    const before = await stateOf(user);
    const bodies: [string, string, string][] = [
      ['/v3/auth/svc_codes', '{"amount":"0.01","amount":"4","currency":"btc"}', 'malformed_json'],
      [
        '/v3/auth/svc_codes',
        '{"amount":"0.01","currency":"btc","__proto__":{"amount":"4"}}',
        'malformed_json',
      ],
      [
        '/v3/auth/svc_codes',
        '{"amount":"0.01","currency":"btc","constructor":{"prototype":{"x":1}}}',
        'malformed_json',
      ],
      ['/v3/auth/svc_codes', '{"amount":"0","currency":"btc"}', 'validation_failed'],
      ['/v3/auth/svc_codes', '{"amount":"-0.01","currency":"btc"}', 'validation_failed'],
      ['/v3/auth/svc_codes', '{"amount":-0,"currency":"btc"}', 'validation_failed'],
      [
        '/v3/auth/withdraw',
        `{"withdraw_type":"btc","amount":"-1","address":"${BTC_ADDRESS}"}`,
        'validation_failed',
      ],
      [
        '/v3/auth/withdraw',
        `{"withdraw_type":"btc","amount":0,"address":"${BTC_ADDRESS}"}`,
        'validation_failed',
      ],
      [
        '/v3/auth/withdraw',
        `{"withdraw_type":"btc","amount":"0.1","amount":"4","address":"${BTC_ADDRESS}"}`,
        'malformed_json',
      ],
      ['/v3/auth/w/order/submit', '{"symbol":"btcuah","type":"limit","amount":"0.5","price":"-1000"}', ''],
      ['/v3/auth/w/order/submit', '{"symbol":"btcuah","type":"limit","amount":"0.5","price":"0"}', ''],
      ['/v3/auth/w/order/submit', '{"symbol":"btcuah","type":"limit","amount":"0","price":"1000"}', ''],
      [
        '/v3/auth/w/order/submit',
        '{"symbol":"btcuah","type":"limit","amount":"--0.5","price":"1000"}',
        'validation_failed',
      ],
      ['/v3/auth/deposit', '{"currency":"uah","amount":"-500"}', 'validation_failed'],
      ['/v3/auth/deposit', '{"currency":"uah","amount":"500","currency":"usd"}', 'malformed_json'],
    ];
    for (const [path, body, name] of bodies) {
      const response = await post(user, path, body);
      expect([body, response.statusCode]).toEqual([body, 400]);
      expect(response.json()).toEqual({
        error: { code: expect.any(Number), name: name || expect.any(String), message: expect.any(String) },
      });
    }
    expect(await stateOf(user)).toEqual(before);
  });
});

describe('an order id is an integer in its documented form', () => {
  it('{"order_id":"0x<id>"} and its relatives cancel nothing', async () => {
    const user = await funded();
    const placed = await post(
      user,
      '/v3/auth/w/order/submit',
      '{"symbol":"btcuah","type":"limit","amount":"0.5","price":"1000"}',
    );
    expect(placed.statusCode).toBe(200);
    const id = placed.json()[0] as number;
    const hex = `0x${id.toString(16)}`;
    for (const body of [
      `{"order_id":"${hex}"}`,
      `{"order_id":"${id}e0"}`,
      `{"order_id":"${id}.0"}`,
      `{"order_id":${id}.0000000000000000001}`,
      `{"order_id":"+${id}"}`,
      `{"order_id":" ${id}"}`,
      `{"order_id":[${id}]}`,
      `{"order_id":${id}.5}`,
      `{"order_id":true}`,
      `{"order_id":${id},"order_id":${id}}`,
    ]) {
      const response = await post(user, '/v3/order/cancel', body);
      expect([body, response.statusCode]).toEqual([body, 400]);
    }
    for (const body of [
      `{"order_ids":["${hex}"]}`,
      `{"order_ids":"[${id}.5]"}`,
      `{"order_ids":"[\\"${hex}\\"]"}`,
    ]) {
      const response = await post(user, '/v3/order/cancel/multi', body);
      expect(response.statusCode === 400 || response.json().length === 0).toBe(true);
    }
    const active = await post(user, '/v3/auth/r/orders/btcuah', '{}');
    expect(active.json().map((order: unknown[]) => order[0])).toContain(id);
    // The documented forms still cancel it.
    const cancelled = await post(user, '/v3/order/cancel', `{"order_id":"${id}"}`);
    expect(cancelled.statusCode).toBe(200);
  });
});

/** The exact value of a plain decimal text in minor units of `precision`, or undefined past it. */
function exactMinor(text: string, precision: number): bigint | undefined {
  const [whole = '0', fraction = ''] = text.split('.');
  const trimmed = fraction.replace(/0+$/, '');
  if (trimmed.length > precision) return undefined;
  return BigInt(whole + trimmed.padEnd(precision, '0'));
}

describe('property: an accepted transfer code escrows exactly the decimal value of the text sent', () => {
  const digits = (min: number, max: number) =>
    fc.array(fc.constantFrom(...'0123456789'), { minLength: min, maxLength: max }).map((d) => d.join(''));
  const decimal = fc
    .tuple(digits(1, 2), fc.option(digits(1, 20), { nil: undefined }))
    .map(([whole, fraction]) => (fraction === undefined ? whole : `${whole}.${fraction}`))
    // JSON forbids leading zeros in a number token; keep the texts valid for both forms.
    .map((text) => text.replace(/^0+(?=\d)/, ''));
  const hostile = fc.oneof(
    fc.constantFrom(...NOT_AMOUNTS),
    decimal.map((d) => `"0x${d}"`),
    decimal.map((d) => `"${d}e-1"`),
    decimal.map((d) => `"+${d}"`),
    decimal.map((d) => `" ${d}"`),
    decimal.map((d) => `"${d}\\n"`),
    decimal.map((d) => `[${d}]`),
    fc.string({ maxLength: 12 }).map((s) => JSON.stringify(s)),
  );
  const input = fc.oneof(
    decimal.map((text) => ({ json: text, text })),
    decimal.map((text) => ({ json: `"${text}"`, text })),
    hostile.map((json) => ({ json, text: undefined as string | undefined })),
  );

  for (const seed of testSeeds([2801]))
    it(seedName(seed), async () => {
      const user = await funded();
      let accepted = 0;
      await fc.assert(
        fc.asyncProperty(input, async ({ json, text }) => {
          const before = await balanceMap(w.db(), user.account.id);
          const response = await post(user, '/v3/auth/svc_codes', `{"amount":${json},"currency":"btc"}`);
          const after = await balanceMap(w.db(), user.account.id);
          const moved = before.btc![0] - after.btc![0];
          const minor = text === undefined || !/^\d+(\.\d+)?$/.test(text) ? undefined : exactMinor(text, 8);
          if (response.statusCode === 200) {
            // Accepted only for a plain decimal within 8 decimals, and exactly its value moved.
            expect(minor).toBeDefined();
            expect(moved).toBe(minor! * 10n ** BigInt(BTC_LEDGER - 8));
            accepted += 1;
          } else {
            expect(moved).toBe(0n);
            expect(response.statusCode).toBe(400);
            const expected =
              minor === undefined
                ? text !== undefined && /^\d+(\.\d+)?$/.test(text)
                  ? 'too_many_decimals'
                  : 'validation_failed'
                : minor === 0n
                  ? 'validation_failed'
                  : 'insufficient_funds';
            expect([json, response.json().error.name]).toEqual([json, expected]);
          }
        }),
        { seed, numRuns: 60 },
      );
      expect(accepted).toBeGreaterThan(0);
    });
});
