/**
 * Traces across services (issue 30): the exchange and the payment gateway run as real processes
 * with the standard OTEL_* variables pointing at an OTLP/HTTP receiver served by this test (JSON
 * protocol). One fiat deposit, driven as the payer's client would with one W3C `traceparent` (the
 * exchange's deposit request, the gateway's invoice and hosted page), must produce one trace that
 * holds the exchange's deposit request, the gateway's hosted-page submit, the gateway's callback
 * delivery (sent later by its background loop, joined to the trace through the outbox) and the
 * exchange's handling of that callback, as a child of the gateway's call.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type ServiceProcess, startServiceProcess } from '@platform/testkit/app';
import { useTestDatabase } from '@platform/testkit/fixtures';
import { startTcpFront, type TcpFront } from '@platform/testkit/front';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount } from '../../src/accounts/store.js';
import { issueApiKey } from '../../src/apikeys/store.js';
import { createSecretBox } from '../../src/crypto/secret-box.js';
import type { Database } from '../../src/db/database.js';
import { openStorage } from '../../src/db/open.js';
import { formFields, postJson } from '../fiat/gateway-client.js';
import { v3Headers } from '../support/signing.js';
import { startOtlpReceiver } from './otlp-receiver.js';

const REPO = fileURLToPath(new URL('../../../../', import.meta.url));
const GATEWAY_DIR = path.join(REPO, 'services/paygate');

async function eventually<T>(what: string, probe: () => Promise<T | undefined> | T | undefined): Promise<T> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

const exchangeDb = useTestDatabase('exchange');
const gatewayDb = useTestDatabase('paygate');
const masterKey = randomBytes(32);
let receiver: Awaited<ReturnType<typeof startOtlpReceiver>>;
let exchangeFront: TcpFront;
let gatewayFront: TcpFront;
let exchange: ServiceProcess | undefined;
let gateway: ServiceProcess | undefined;
let db: Database | undefined;
let configDir = '';

const OTEL = (url: string) => ({
  OTEL_EXPORTER_OTLP_ENDPOINT: url,
  OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
  // Export finished spans every 100 ms instead of 5 s.
  OTEL_BSP_SCHEDULE_DELAY: '100',
});

beforeAll(async () => {
  receiver = await startOtlpReceiver();
  exchangeFront = await startTcpFront();
  gatewayFront = await startTcpFront();
  configDir = mkdtempSync(path.join(tmpdir(), 'fiat-trace-'));
  const yaml = readFileSync(path.join(GATEWAY_DIR, 'config/gateway.yaml'), 'utf8').replaceAll(
    'http://127.0.0.1:3100/v3/paygate/',
    `${exchangeFront.url}/v3/paygate/`,
  );
  const configFile = path.join(configDir, 'gateway.yaml');
  writeFileSync(configFile, yaml);
  [exchange, gateway] = await Promise.all([
    startServiceProcess({
      sandboxSecrets: true,
      name: 'exchange',
      entry: path.join(REPO, 'services/exchange/src/server.ts'),
      cwd: REPO,
      port: 0,
      env: {
        DATABASE_URL: exchangeDb.url,
        MASTER_KEY: masterKey.toString('hex'),
        MASTER_KEY_FILE: '',
        DATA_DIR: path.join(configDir, 'exchange'),
        SEED_DEMO: 'false',
        PAYGATE_URL: gatewayFront.url,
        LOG_LEVEL: 'warn',
        ...OTEL(receiver.url),
      },
      healthPath: '/health',
      timeoutMs: 90_000,
    }),
    startServiceProcess({
      sandboxSecrets: true,
      name: 'paygate',
      entry: path.join(GATEWAY_DIR, 'src/server.ts'),
      cwd: REPO,
      port: 0,
      env: {
        PAYGATE_CONFIG: configFile,
        DATABASE_URL: gatewayDb.url,
        PUBLIC_URL: gatewayFront.url,
        WORKER_INTERVAL_MS: '50',
        CALLBACK_RETRY_BASE_MS: '100',
        CALLBACK_RETRY_MAX_MS: '1000',
        LOG_LEVEL: 'warn',
        ...OTEL(receiver.url),
      },
      healthPath: '/health',
      timeoutMs: 90_000,
    }),
  ]);
  exchangeFront.target(exchange.port);
  gatewayFront.target(gateway.port);
  // The exchange process migrated the database; the test writes the account and its key directly.
  db = await openStorage({ kind: 'postgres', url: exchangeDb.url, poolSize: 2 });
}, 120_000);

afterAll(async () => {
  await Promise.all([exchange?.stop(), gateway?.stop()]);
  await db?.close();
  await exchangeFront?.close();
  await gatewayFront?.close();
  await receiver?.close();
  if (configDir) rmSync(configDir, { recursive: true, force: true });
});

/** A form submitted as a browser without JavaScript would, following 303s, with the trace header. */
async function submit(action: string, fields: Record<string, string>, traceparent: string) {
  let url = new URL(action, gatewayFront.url).toString();
  let response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', traceparent },
    body: new URLSearchParams(fields).toString(),
    redirect: 'manual',
  });
  for (let hops = 0; response.status === 303 && hops < 5; hops += 1) {
    url = new URL(response.headers.get('location') ?? '', url).toString();
    await response.arrayBuffer();
    response = await fetch(url, { headers: { traceparent }, redirect: 'manual' });
  }
  return { status: response.status, html: await response.text() };
}

describe('one fiat deposit is one trace across the exchange and the gateway', () => {
  it('joins the deposit request, the hosted page, the callback delivery and its handling', async () => {
    const traceId = randomBytes(16).toString('hex');
    const traceparent = `00-${traceId}-${randomBytes(8).toString('hex')}-01`;
    const storage = db as Database;
    const account = await storage.transaction((tx) =>
      createAccount(tx, { email: `trace-${randomBytes(4).toString('hex')}@example.com` }),
    );
    const { key, secret } = await issueApiKey(storage, createSecretBox(masterKey), account.id, ['read']);
    const v3 = async (uri: string, body: unknown) => {
      const text = JSON.stringify(body);
      const response = await fetch(`${exchangeFront.url}${uri}`, {
        method: 'POST',
        headers: { ...v3Headers(key.publicKey, secret, uri, text), traceparent },
        body: text,
      });
      // biome-ignore lint/suspicious/noExplicitAny: the exchange's answers of several shapes
      return { status: response.status, json: (await response.json()) as Record<string, any> };
    };

    const me = await v3('/v3/auth/me', {});
    expect(me.status).toBe(200);
    const created = await v3('/v3/auth/deposit', { currency: 'uah', amount: 500 });
    expect(created.status).toBe(200);
    const invoice = await postJson(
      `${gatewayFront.url}/public-api/payment-invoices`,
      {
        public_key: me.json.public_keys.deposit_sdk_uah_public_key,
        reference_id: String(created.json.deposit_id),
        description: 'deposit',
        service: created.json.provider,
        currency: 'uah',
        amount: 500,
        // The form as the exchange signed it (issue 28: the gateway refuses an unsigned one).
        expires: created.json.expires,
        signature: created.json.signature,
      },
      { traceparent },
    );
    expect(invoice.status).toBe(201);
    const { action, payload } = invoice.json.data.active_payment;
    const page = await submit(
      action,
      Object.fromEntries(payload.map((p: { name: string; value: string }) => [p.name, p.value])),
      traceparent,
    );
    expect(page.status).toBe(200);
    const pay = formFields(page.html, '/pay');
    const paid = await submit(
      pay.action,
      { ...pay.fields, card_number: '4242424242424242', expiry: '12/39', cvc: '123' },
      traceparent,
    );
    expect(paid.status).toBe(200);

    // The exchange's handling of the gateway's callback, exported once the deposit is credited.
    const inTrace = () => receiver.spans.filter((span) => span.traceId === traceId);
    const callbackHandled = await eventually('the exchange span of the callback in the trace', () =>
      inTrace().find(
        (span) =>
          span.service === 'exchange' && span.kind === 2 && span.attributes.includes('/v3/paygate/callback'),
      ),
    );
    // The gateway exports its client span of that call in its own batch, which can arrive after the
    // exchange's: waited for too.
    const caller = await eventually("the gateway's client span of the callback", () =>
      inTrace().find((span) => span.spanId === callbackHandled.parentSpanId),
    );
    const spans = inTrace();
    // The exchange's deposit request, the gateway's hosted-page submit, in the same trace.
    expect(
      spans.some(
        (span) =>
          span.service === 'exchange' && span.kind === 2 && span.attributes.includes('/v3/auth/deposit'),
      ),
    ).toBe(true);
    expect(
      spans.some((span) => span.service === 'paygate' && span.kind === 2 && span.attributes.includes('/pay')),
    ).toBe(true);
    // The callback's server span is the child of the gateway's outgoing call (client span).
    expect(caller).toMatchObject({ service: 'paygate', kind: 3 });
    // Database statements of the exchange are spans of the same trace.
    expect(
      spans.some(
        (span) => span.service === 'exchange' && /pg|postgres|SELECT|INSERT|UPDATE/i.test(span.name),
      ),
    ).toBe(true);
  }, 120_000);
});
