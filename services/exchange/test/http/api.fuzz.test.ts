/**
 * Every route of the published OpenAPI document fuzzed (issue 18): valid and broken requests over a
 * real listener on PostgreSQL, v3 requests signed with a real API key (all scopes) and v2 requests
 * with a real Peatio signature, so the fuzz gets past authentication into the handlers. No 5xx, every
 * 4xx in the `{"error": {code, name, message}}` shape, and a refused request leaves balances, the
 * journal, orders, codes and withdrawals as they were. `FUZZ_RUNS` / `FUZZ_SEED`: see CONTRIBUTING.md.
 */
import { listenOnFreePort, type RunningApp } from '@platform/testkit/app';
import { tableDigest } from '@platform/testkit/fuzz/digest';
import { listOperations, loadOpenApi, type Operation } from '@platform/testkit/fuzz/openapi';
import type { RequestDraft } from '@platform/testkit/fuzz/requests';
import { fuzzService } from '@platform/testkit/fuzz/run';
import { fuzzSettings } from '@platform/testkit/fuzz/settings';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { defaultPaygateConfig } from '../../src/config.js';
import type { App } from '../../src/http/typed.js';
import { createWallet } from '../../src/wallet/setup.js';
import { accountWithKey, credit } from '../support/accounts.js';
import { clientSignV2, clientSignV3, nextNonce } from '../support/signing.js';
import { reference, secretBox, usePostgresTarget } from '../support/targets.js';
import { testWalletConfig } from '../wallet/support.js';

const target = usePostgresTarget();
let app: App;
let running: RunningApp;
let user: Awaited<ReturnType<typeof accountWithKey>>;

beforeAll(async () => {
  // The payment gateway is left down (nothing listens on port 1): fiat routes answer 502
  // gateway_unavailable, the documented answer, and the fuzz checks they change nothing.
  // Crypto deposits and withdrawals on the sandbox custody, without the background loop.
  const wallet = await createWallet({ db: target.db(), reference, config: testWalletConfig() });
  app = await buildApp({
    db: target.db(),
    reference,
    secretBox,
    wallet,
    paygate: { ...defaultPaygateConfig(), url: 'http://127.0.0.1:1', timeoutMs: 2_000 },
  });
  running = await listenOnFreePort(app);
  user = await accountWithKey(target.db(), ['read', 'trade', 'withdraw']);
  for (const currency of ['btc', 'uah', 'usdt', 'eth'])
    await credit(target.db(), user.account.id, currency, 10n ** 14n);
});
afterAll(async () => {
  await running?.close();
});

/** v3: `svc-*` headers over the path as sent, the nonce and the raw body (`{}` when none). */
function signV3(draft: RequestDraft): RequestDraft {
  const nonce = nextNonce();
  const path = draft.target.split('?')[0] ?? draft.target;
  const body = draft.body && draft.body.length > 0 ? draft.body : Buffer.from('{}');
  const signature = clientSignV3(user.secret, path, nonce, body.toString('latin1'));
  return {
    ...draft,
    headers: [
      ...draft.headers,
      ['svc-apikey', user.apiKey],
      ['svc-nonce', nonce],
      ['svc-signature', signature],
    ],
  };
}

const V2_CREDENTIALS = new Set(['access_key', 'tonce', 'signature']);

function decodeQuery(query: string): [string, string][] {
  try {
    return [...new URLSearchParams(query)];
  } catch {
    return [];
  }
}

/** v2: `access_key`, `tonce` and `signature` over `VERB|URI|sorted params`, in the query or JSON body. */
function signV2(draft: RequestDraft): RequestDraft {
  const [path = '', query = ''] = draft.target.split(/\?(.*)/s);
  const kept = query
    .split('&')
    .filter((pair) => pair !== '' && !V2_CREDENTIALS.has(pair.split('=')[0] ?? ''));
  const params: Record<string, string> = Object.fromEntries(decodeQuery(kept.join('&')));
  params.access_key = user.apiKey;
  params.tonce = nextNonce();
  if (draft.method === 'GET') {
    const signature = clientSignV2(user.secret, 'GET', path, params);
    const credentials = `access_key=${params.access_key}&tonce=${params.tonce}&signature=${signature}`;
    return { ...draft, target: `${path}?${[...kept, credentials].join('&')}` };
  }
  let body: unknown;
  try {
    body = JSON.parse(draft.body?.toString('utf8') ?? '');
  } catch {
    return draft;
  }
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return draft;
  const fields = { ...(body as Record<string, unknown>), access_key: params.access_key, tonce: params.tonce };
  for (const [key, value] of Object.entries(fields))
    if (!V2_CREDENTIALS.has(key)) params[key] = typeof value === 'string' ? value : JSON.stringify(value);
  const signed = { ...fields, signature: clientSignV2(user.secret, draft.method, path, params) };
  return { ...draft, body: Buffer.from(JSON.stringify(signed)) };
}

function usesV2(operation: Operation): boolean {
  return (
    operation.parameters.some((p) => p.name === 'access_key') ||
    operation.body?.schema.properties?.access_key !== undefined
  );
}

/** 400 requests in `npm test`; FUZZ_RUNS / FUZZ_SEED override (testkit fuzz/settings.ts). */
const settings = fuzzSettings(400);

it(
  'answers every generated request without a 5xx, in its error shape, changing nothing when refusing',
  async () => {
    const doc = await loadOpenApi(running.url);
    const operations = listOperations(doc);
    const errorShape = doc.components?.schemas?.['def-0'];
    expect(errorShape).toBeDefined();
    const markets = reference.markets.map((m) => m.id);
    const currencies = reference.currencies.map((c) => c.code);
    const stats = await fuzzService(
      {
        name: 'exchange',
        baseUrl: running.url,
        operations,
        errorShape: errorShape ?? {},
        sign: (draft, operation) =>
          operation.security.length > 0 ? signV3(draft) : usesV2(operation) ? signV2(draft) : draft,
        examples: {
          symbol: markets,
          market: markets,
          symbols: [markets.join(',')],
          currency: currencies,
          withdraw_type: currencies,
          amount: ['0.001', '-0.001', 0.5, '1'],
          price: ['1000', 2000000],
          volume: ['0.01'],
        },
        // Bodies whose fields agree (market, type, amounts), so some orders and codes get through.
        samples: {
          'POST /v3/auth/w/order/submit': [
            { symbol: 'btcuah', type: 'limit', amount: '0.001', price: '1000000' },
            { symbol: 'btcuah', type: 'limit', amount: '-0.001', price: '3000000' },
            { symbol: 'ethuah', type: 'market', amount: '0.01' },
          ],
          'POST /v3/auth/svc_codes': [{ amount: '0.001', currency: 'btc' }],
          'POST /v3/auth/withdraw': [{ withdraw_type: 'btc', amount: '0.001', address: 'bcrt1qfuzzaddress' }],
          'POST /v3/auth/withdraw/addresses': [
            { currency: 'btc', address: 'bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq', label: 'fuzz' },
          ],
        },
        // Balances, journal, orders and trades, codes, wallet rows. Not api_keys: a refused but correctly
        // signed request records its nonce there by design (no replay), nor svc_code_failures (failed
        // redemptions are counted on purpose, src/codes/limits.ts).
        digest: tableDigest(
          async (sql) => (await target.db().query(sql)).rows,
          [
            'accounts',
            'balances',
            'journal_entries',
            'journal_legs',
            'orders',
            'trades',
            'engine_commands',
            'svc_codes',
            'withdrawals',
            'deposits',
            'deposit_addresses',
            'fund_sources',
            'sandbox_transfers',
            'action_links',
            'withdraw_addresses',
          ],
        ),
        expectedServerError: (_operation, status, body) =>
          status === 502 && body.includes('"gateway_unavailable"'),
        healthPath: '/health',
      },
      settings,
    );
    // The signed requests reached the handlers: many were accepted (per operation the count is too
    // small to require one each; with 400 requests about 40 signed ones are).
    const accepted = operations
      .filter((o) => o.security.length > 0)
      .reduce((sum, o) => sum + (stats.byOperation[o.id]?.['2xx'] ?? 0), 0);
    expect(accepted).toBeGreaterThanOrEqual(10);
  },
  settings.timeoutMs,
);
