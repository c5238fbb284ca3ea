import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { accountWithKey } from '../support/accounts.js';
import { v3Headers } from '../support/signing.js';
import { formFields, payByCard, postJson, submitForm } from './gateway-client.js';
import { eventually, useFiatPlatform } from './platform.js';

/**
 * Issue 41, "The spec's fiat deposit flow fails": a client written to the exchange specification
 * ("Fiat deposit flow", ../../../../shared/spec/exchange-api.md) deposits with exactly the spec's
 * bodies, over HTTP against the running exchange (signed as the spec's Authentication section says)
 * and the gateway (a real process). The audit's three rows: (a) the spec's invoice payload is
 * accepted, (b) the page it leads to pays and the exchange credits the deposit, (c) `service_fields`
 * are honoured. And the red-team cases around the unsigned body: a third party repeating a payer's
 * create gets no token, and an invoice of another amount for a real deposit is never credited.
 */
const platform = useFiatPlatform();

/** The spec client: private v3 calls signed HMAC-SHA384(secret, path + nonce + JSON(body)). */
function specClient(apiKey: string, secret: string) {
  return async (path: string, body: unknown = {}) => {
    const text = JSON.stringify(body);
    const response = await fetch(`${platform.exchangeUrl}${path}`, {
      method: 'POST',
      headers: v3Headers(apiKey, secret, path, text),
      body: text,
    });
    // biome-ignore lint/suspicious/noExplicitAny: the spec client reads answers of several shapes
    return { status: response.status, json: (await response.json()) as Record<string, any> };
  };
}

const entries = (payload: { name: string; value: string }[]) =>
  Object.fromEntries(payload.map((p) => [p.name, p.value]));

async function depositRow(id: number) {
  const { rows } = await platform.db.query<{ status: string; provider: string }>(
    'SELECT status, provider FROM deposits WHERE id = $1',
    [id],
  );
  return rows[0];
}

/** Steps 1 and 2 of the spec's flow: the prerequest, then the deposit. */
async function specDeposit(currency: 'UAH' | 'USD', amount: number) {
  const user = await accountWithKey(platform.db, ['read']);
  const call = specClient(user.apiKey, user.secret);
  const me = (await call('/v3/auth/me')).json;
  const publicKey: string = me.public_keys[`deposit_sdk_${currency.toLowerCase()}_public_key`];
  // 1. The prerequest: `{currency (upper case), public_key}`.
  const prerequest = await postJson(`${platform.gatewayUrl}/public-api/payment-prerequest`, {
    currency,
    public_key: publicKey,
  });
  expect(prerequest.status).toBe(200);
  // 2. The deposit: `currency` (lower case) and `amount`; the answer carries `deposit_id`.
  const deposit = await call('/v3/auth/deposit', { currency: currency.toLowerCase(), amount });
  expect(deposit.status).toBe(200);
  expect(deposit.json.deposit_id).toEqual(expect.any(Number));
  return {
    user,
    call,
    publicKey,
    services: prerequest.json.data.services,
    depositId: deposit.json.deposit_id,
  };
}

describe("the spec's fiat deposit flow, with exactly the spec's bodies", () => {
  it('(a) accepts the spec payload, (b) its page pays and the deposit is credited; a third party repeating it gets no token', async () => {
    const { user, call, publicKey, services, depositId } = await specDeposit('UAH', 500);
    const service = services.payment_card_uah_hpp;
    expect(service.fields).toEqual([]); // an empty `fields` means no extra input
    // 3. The invoice: the spec's body, nothing more.
    const body = {
      public_key: publicKey,
      reference_id: String(depositId),
      description: `Deposit ${depositId}`,
      service: service.code,
      currency: 'uah',
      amount: 500,
    };
    const invoice = await postJson(`${platform.gatewayUrl}/public-api/payment-invoices`, body);
    expect(invoice.status).toBe(201); // (a)
    const { action, payload } = invoice.json.data.active_payment;
    const token = entries(payload).token!;
    expect(token).toMatch(/^[0-9a-f]{64}$/);

    // A third party who learns the reference repeats the payer's create byte for byte: no token.
    const repeat = await postJson(`${platform.gatewayUrl}/public-api/payment-invoices`, body);
    expect(repeat.status).toBe(401);
    expect(JSON.stringify(repeat.json)).not.toContain(token);
    expect(JSON.stringify(repeat.json)).not.toContain(invoice.json.data.id);

    // (b) The payload, submitted as a form, opens the page; the success card pays it.
    const page = await submitForm(platform.gatewayUrl, action, entries(payload));
    expect(page.status).toBe(200);
    expect(page.html).toContain('500.00');
    const paid = await payByCard(platform.gatewayUrl, page.html);
    expect(paid.html).toMatch(/Total paid/);
    // 5. Status: the deposit's details and the assets history say done, and the balance has it.
    const details = await eventually(async () => {
      const answer = await call('/v3/auth/deposit/details', { id: depositId });
      return answer.json.status === 'done' ? answer.json : undefined;
    });
    expect(details).toMatchObject({ id: depositId, amount: '500', provider: 'payment_card_uah_hpp' });
    const history = (await call('/v3/auth/assets-history/deposits', {})).json;
    expect(history.items).toContainEqual(
      expect.objectContaining({ id: depositId, amount: 500, status: 'done' }),
    );
    const { rows } = await platform.db.query<{ available: string }>(
      "SELECT available::text FROM balances WHERE account_id = $1 AND currency = 'uah'",
      [user.account.id],
    );
    expect(rows[0]?.available).toBe(String(500n * 1_000_000n));
  });

  it('(c) honours service_fields: checked against the service, shown on the page, and the deposit is credited', async () => {
    const { call, publicKey, services, depositId } = await specDeposit('USD', 20);
    const service = services.perfectmoney_transfer_usd_hpp;
    expect(service.fields.map((f: { key: string }) => f.key)).toEqual(['payer_account']);
    const body = (fields: Record<string, string>) => ({
      public_key: publicKey,
      reference_id: String(depositId),
      description: 'Deposit',
      service: service.code,
      service_fields: fields,
      currency: 'usd',
      amount: 20,
    });
    // A value the field's regexp refuses, and a key the service has not: refused, nothing created.
    const wrong = await postJson(
      `${platform.gatewayUrl}/public-api/payment-invoices`,
      body({ payer_account: 'X1' }),
    );
    expect([wrong.status, wrong.json.error?.name, wrong.json.error?.field]).toEqual([
      400,
      'invalid_field',
      'payer_account',
    ]);
    const unknown = await postJson(
      `${platform.gatewayUrl}/public-api/payment-invoices`,
      body({ colour: 'blue' }),
    );
    expect([unknown.status, unknown.json.error?.name]).toEqual([400, 'invalid_field']);
    // The right one creates the invoice, and the page shows it.
    const invoice = await postJson(
      `${platform.gatewayUrl}/public-api/payment-invoices`,
      body({ payer_account: 'U1234567' }),
    );
    expect(invoice.status).toBe(201);
    const { action, payload } = invoice.json.data.active_payment;
    const page = await submitForm(platform.gatewayUrl, action, entries(payload));
    expect(page.html).toContain('Your Perfect Money account');
    expect(page.html).toContain('U1234567');
    const wallet = formFields(page.html, '/wallet');
    await submitForm(platform.gatewayUrl, wallet.action, { ...wallet.fields, decision: 'approve' });
    const details = await eventually(async () => {
      const answer = await call('/v3/auth/deposit/details', { id: depositId });
      return answer.json.status === 'done' ? answer.json : undefined;
    });
    // The service the payer used, as the gateway reported it.
    expect(details).toMatchObject({ id: depositId, amount: '20', provider: 'perfectmoney_transfer_usd_hpp' });
  });

  it('never credits an invoice of another amount made for a real deposit with the unsigned body', async () => {
    const { user, call, publicKey, depositId } = await specDeposit('UAH', 100);
    // The third party is first (it would have to guess the random id in time; here it is told it),
    // with its own amount, and pays its invoice.
    const theirs = {
      public_key: publicKey,
      reference_id: String(depositId),
      description: 'not the payer',
      service: 'payment_card_uah_hpp',
      currency: 'uah',
      amount: 1000,
    };
    const squat = await postJson(`${platform.gatewayUrl}/public-api/payment-invoices`, theirs);
    expect(squat.status).toBe(201);
    const page = await submitForm(
      platform.gatewayUrl,
      squat.json.data.active_payment.action,
      entries(squat.json.data.active_payment.payload),
    );
    await payByCard(platform.gatewayUrl, page.html);
    // The payer's own create (the right amount) gets no token: the reference is taken.
    const payers = await postJson(`${platform.gatewayUrl}/public-api/payment-invoices`, {
      ...theirs,
      amount: 100,
      description: 'deposit',
    });
    expect(payers.status).toBe(401);
    // The gateway called back: the created event was acknowledged and ignored, the paid one refused
    // (it stays in the gateway's outbox, retried, for an operator); the deposit is never credited.
    await eventually(async () => {
      const db = new pg.Client({ connectionString: platform.gatewayDatabaseUrl });
      await db.connect();
      try {
        const { rows } = await db.query<{ attempts: number; last_error: string | null }>(
          "SELECT attempts, last_error FROM callback_outbox WHERE event_id LIKE '%:success' AND body::jsonb ->> 'reference_id' = $1",
          [String(depositId)],
        );
        return rows[0] && rows[0].attempts >= 2 ? rows[0] : undefined;
      } finally {
        await db.end();
      }
    });
    const { rows: events } = await platform.db.query<{ status: string; outcome: string }>(
      `SELECT status, outcome FROM paygate_events WHERE object = 'invoice' AND reference_id = $1 ORDER BY status`,
      [String(depositId)],
    );
    expect(events).toEqual([{ status: 'created', outcome: 'ignored' }]);
    expect(await depositRow(depositId)).toMatchObject({ status: 'pending' });
    expect((await call('/v3/auth/deposit/details', { id: depositId })).json.status).toBe('pending');
    const { rows } = await platform.db.query(
      'SELECT 1 FROM balances WHERE account_id = $1 AND available > 0',
      [user.account.id],
    );
    expect(rows).toEqual([]);
  });
});
