/**
 * Every route of the published OpenAPI document fuzzed (issue 18): valid and broken requests over a
 * real listener on PostgreSQL, merchant API calls signed with the exchange merchant's real secret so
 * the fuzz gets past the signature check. No 5xx, every JSON 4xx in the
 * `{"error": {code, name, message, field?}}` shape, and a refused request leaves invoices, payouts
 * and the callback outbox as they were. `FUZZ_RUNS` / `FUZZ_SEED`: see CONTRIBUTING.md.
 */
import { createHmac } from 'node:crypto';
import { tableDigest } from '@platform/testkit/fuzz/digest';
import { listOperations, loadOpenApi } from '@platform/testkit/fuzz/openapi';
import type { RequestDraft } from '@platform/testkit/fuzz/requests';
import { fuzzService } from '@platform/testkit/fuzz/run';
import { fuzzSettings } from '@platform/testkit/fuzz/settings';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { SANDBOX_SECRET, testCatalog } from '../support/catalog.js';
import { type RunningGateway, startGateway } from '../support/gateway.js';
import { signed } from '../support/invoice-form.js';
import { type Receiver, startReceiver } from '../support/receiver.js';
import { usePostgresTarget } from '../support/targets.js';

const target = usePostgresTarget();
let gateway: RunningGateway;
let receiver: Receiver;

beforeAll(async () => {
  receiver = await startReceiver(SANDBOX_SECRET);
  // No worker: nothing changes the tables between two requests but the requests themselves.
  gateway = await startGateway({
    db: target.db(),
    catalog: testCatalog({ callbackUrl: receiver.url, returnUrl: 'http://merchant.test/return' }),
    startWorker: false,
  });
});
afterAll(async () => {
  await gateway?.close();
  await receiver?.close();
});

/** The merchant signature of gateway-contract.md: HMAC-SHA256(secret, `${timestamp}.${raw body}`). */
function signMerchant(draft: RequestDraft): RequestDraft {
  const timestamp = String(Math.floor(Date.now() / 1000));
  const body = draft.body ?? Buffer.alloc(0);
  const signature = createHmac('sha256', SANDBOX_SECRET)
    .update(Buffer.concat([Buffer.from(`${timestamp}.`), body]))
    .digest('hex');
  return {
    ...draft,
    headers: [
      ...draft.headers,
      ['x-paygate-merchant', 'exchange'],
      ['x-paygate-timestamp', timestamp],
      ['x-paygate-signature', signature],
    ],
  };
}

/** 300 requests in `npm test`; FUZZ_RUNS / FUZZ_SEED override (testkit fuzz/settings.ts). */
const settings = fuzzSettings(300);

it(
  'answers every generated request without a 5xx, in its error shape, changing nothing when refusing',
  async () => {
    const doc = await loadOpenApi(gateway.url);
    const errorShape = doc.components?.schemas?.['def-0'];
    expect(errorShape).toBeDefined();
    const stats = await fuzzService(
      {
        name: 'paygate',
        baseUrl: gateway.url,
        operations: listOperations(doc),
        errorShape: errorShape ?? {},
        sign: (draft, operation) => (operation.security.length > 0 ? signMerchant(draft) : draft),
        examples: {
          public_key: ['pk_test_exchange_uah', 'pk_test_exchange_usd'],
          currency: ['uah', 'UAH', 'usd'],
          service: ['payment_card_uah_hpp', 'payment_card_uah', 'default'],
          amount: [500, '500.00', '0.01', -1],
        },
        // Bodies whose fields agree (key, currency, service), so some creations get through.
        samples: {
          'POST /public-api/payment-invoices': [0, 1, 2].map((n) =>
            signed({
              public_key: 'pk_test_exchange_uah',
              reference_id: `fuzz-dep-${n}`,
              description: 'Deposit',
              service: 'payment_card_uah_hpp',
              currency: 'uah',
              amount: 500 + n,
            }),
          ),
          'POST /merchant-api/payouts': [0, 1].map((n) => ({
            reference_id: `fuzz-wd-${n}`,
            service: 'payment_card_uah',
            currency: 'UAH',
            amount: 100 + n,
            fields: { card_number: '4242424242424242' },
          })),
          'POST /merchant-api/invoices/status': [{ reference_id: 'fuzz-dep-0' }],
          'POST /merchant-api/payouts/status': [{ reference_id: 'fuzz-wd-0' }],
          'POST /merchant-api/events': [{ after: 0, limit: 10 }],
        },
        digest: tableDigest(
          async (sql) => (await target.db().query(sql)).rows,
          ['invoices', 'payouts', 'callback_outbox'],
        ),
        healthPath: '/health',
      },
      settings,
    );
    // Signed merchant calls and public calls reached the handlers: some were accepted.
    // (summed: per operation the counts are too small to require one each)
    const accepted = (ids: string[]) =>
      ids.reduce((sum, id) => sum + (stats.byOperation[id]?.['2xx'] ?? 0), 0);
    expect(
      accepted(['POST /public-api/payment-invoices', 'POST /public-api/payment-prerequest']),
    ).toBeGreaterThan(0);
    expect(
      accepted([
        'POST /merchant-api/payouts',
        'POST /merchant-api/payouts/status',
        'POST /merchant-api/invoices/status',
        'POST /merchant-api/events',
        'POST /merchant-api/refunds',
        'POST /merchant-api/refunds/status',
      ]),
    ).toBeGreaterThan(0);
  },
  settings.timeoutMs,
);
