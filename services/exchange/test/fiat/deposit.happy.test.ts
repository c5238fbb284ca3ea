import { fromAcceptLanguage as payerLocale } from '@platform/checkout-look/payer-language';
import { describe, expect, it } from 'vitest';
import { balancesOf } from '../../src/ledger/store.js';
import { accountWithKey } from '../support/accounts.js';
import { client } from '../support/client.js';
import { formFields, postJson, signedCallback, submitForm } from './gateway-client.js';
import { eventually, useFiatPlatform } from './platform.js';

const platform = useFiatPlatform();
const UAH = 1_000_000n; // ledger minor units per hryvnia (ledger_precision 6)

async function uahAvailable(accountId: number): Promise<bigint> {
  return (await balancesOf(platform.db, accountId)).find((b) => b.currency === 'uah')?.available ?? 0n;
}

async function depositStatus(id: number): Promise<string | undefined> {
  const { rows } = await platform.db.query<{ status: string }>('SELECT status FROM deposits WHERE id = $1', [
    id,
  ]);
  return rows[0]?.status;
}

/** Creates the deposit at the exchange and its invoice at the gateway; answers the hosted page. */
async function startDeposit(amount: number) {
  const user = await accountWithKey(platform.db, ['read']);
  const api = client(() => platform.exchange, user.apiKey, user.secret);
  const me = (await api.v3('/v3/auth/me')).json();
  const created = await api.v3('/v3/auth/deposit', { currency: 'uah', amount });
  expect(created.statusCode).toBe(200);
  const deposit = created.json();
  const invoice = await postJson(`${platform.gatewayUrl}/public-api/payment-invoices`, {
    public_key: me.public_keys.deposit_sdk_uah_public_key,
    reference_id: String(deposit.deposit_id),
    description: 'deposit',
    service: deposit.provider,
    currency: 'uah',
    amount,
    expires: deposit.expires,
    signature: deposit.signature,
  });
  expect(invoice.status).toBe(201);
  const { action, payload } = invoice.json.data.active_payment;
  const page = await submitForm(
    platform.gatewayUrl,
    action,
    Object.fromEntries(payload.map((p: { name: string; value: string }) => [p.name, p.value])),
  );
  expect(page.status).toBe(200);
  return { user, api, deposit, invoice: invoice.json.data, page };
}

async function payWithCard(page: string, card: string) {
  const { action, fields } = formFields(page, '/pay');
  return submitForm(platform.gatewayUrl, action, {
    ...fields,
    card_number: card,
    expiry: '12/39',
    cvc: '123',
  });
}

describe('fiat deposits through the gateway (HTTP forms, no JavaScript)', () => {
  it('shows the merchant public keys in the account object', async () => {
    const user = await accountWithKey(platform.db, ['read']);
    const me = (await client(() => platform.exchange, user.apiKey, user.secret).v3('/v3/auth/me')).json();
    expect(me.public_keys).toEqual({
      deposit_sdk_uah_public_key: 'pk_test_exchange_uah',
      deposit_sdk_usd_public_key: 'pk_test_exchange_usd',
      deposit_sdk_rub_public_key: 'pk_test_exchange_rub',
    });
  });

  it('credits a deposit paid with the success card exactly once', async () => {
    const { user, api, deposit, page } = await startDeposit(500);
    expect(deposit).toMatchObject({
      status: 'pending',
      // One format across create, details and history (README "Fiat amounts"): the currency's id,
      // the amount's decimal text without trailing zeros (a number of the same value in history).
      currency: 5,
      amount: '500',
      provider: 'payment_card_uah_hpp',
    });
    await payWithCard(page.html, '4242424242424242');
    await eventually(async () =>
      (await depositStatus(deposit.deposit_id)) === 'credited' ? true : undefined,
    );
    expect(await uahAvailable(user.account.id)).toBe(500n * UAH);
    const details = await api.v3('/v3/auth/deposit/details', { id: deposit.deposit_id });
    expect(details.statusCode).toBe(200);
    expect(details.json()).toMatchObject({
      id: deposit.deposit_id,
      type: 'deposit',
      currency: 5,
      amount: '500',
      status: 'done',
      provider: 'payment_card_uah_hpp',
    });
    const history = (await api.v3('/v3/auth/assets-history/deposits', {})).json();
    expect(history.items).toContainEqual(
      expect.objectContaining({ id: deposit.deposit_id, type: 'deposit', amount: 500, status: 'done' }),
    );
    const item = history.items.find((i: { id: number }) => i.id === deposit.deposit_id);
    expect([details.json().currency, item.currency]).toEqual([deposit.currency, deposit.currency]);
    expect([details.json().amount, String(item.amount)]).toEqual([deposit.amount, deposit.amount]);

    // The gateway's event delivered again (a lost acknowledgement): acknowledged, not applied again.
    const { rows } = await platform.db.query<{ body: unknown }>(
      `SELECT body FROM paygate_events WHERE object = 'invoice' AND reference_id = $1 AND status = 'success'`,
      [String(deposit.deposit_id)],
    );
    expect(rows).toHaveLength(1);
    const again = signedCallback(rows[0]!.body);
    const replay = await platform.exchange.inject({
      method: 'POST',
      url: '/v3/paygate/callback',
      headers: again.headers,
      payload: again.text,
    });
    expect(replay.statusCode).toBe(200);
    expect(replay.json()).toEqual({ received: true, outcome: 'duplicate' });
    // The same status as a new event id (a second gateway's bug): the credit's idempotency key holds.
    const other = signedCallback({ ...(rows[0]!.body as object), event_id: 'another-event' });
    const second = await platform.exchange.inject({
      method: 'POST',
      url: '/v3/paygate/callback',
      headers: other.headers,
      payload: other.text,
    });
    expect(second.statusCode).toBe(200);
    expect(await uahAvailable(user.account.id)).toBe(500n * UAH);
  });

  it('leaves the balance unchanged when the card is declined, and cancels the deposit when the payer gives up', async () => {
    const { user, deposit, page } = await startDeposit(200);
    const declined = await payWithCard(page.html, '4000000000000002');
    expect(declined.html).toMatch(/declined/i);
    // The invoice stays open for another card (the gateway's CARD_ATTEMPTS_MAX): still pending.
    expect(await depositStatus(deposit.deposit_id)).toBe('pending');
    // The gateway tells of the declined card (status attempt_failed, not a status of the invoice):
    // the receiver records it and leaves the deposit pending.
    const attempt = await eventually(async () => {
      const { rows } = await platform.db.query<{ outcome: string; body: { failure_reason?: string } }>(
        `SELECT outcome, body FROM paygate_events WHERE object = 'invoice' AND reference_id = $1 AND status = 'attempt_failed'`,
        [String(deposit.deposit_id)],
      );
      return rows[0];
    });
    expect(attempt).toMatchObject({ outcome: 'recorded', body: { failure_reason: 'declined' } });
    expect(await depositStatus(deposit.deposit_id)).toBe('pending');
    const { action, fields } = formFields(declined.html, '/cancel');
    await submitForm(platform.gatewayUrl, action, fields);
    await eventually(async () =>
      (await depositStatus(deposit.deposit_id)) === 'canceled' ? true : undefined,
    );
    expect(await uahAvailable(user.account.id)).toBe(0n);
  });

  it('answers the simplified deposit form, which opens the hosted page', async () => {
    const user = await accountWithKey(platform.db, ['read']);
    const api = client(() => platform.exchange, user.apiKey, user.secret);
    const form = await api.v3('/v3/auth/deposit', {
      currency: 'uah',
      amount: '150.5',
      payment_service: 'default',
    });
    expect(form.statusCode).toBe(200);
    const { action, params } = form.json();
    expect(action).toBe(`${platform.gatewayUrl}/public-api/payment-invoices/process`);
    expect(params.map((p: { name: string }) => p.name)).toEqual([
      'amount',
      'reference_id',
      'currency',
      'service',
      'public_key',
      'expires',
      'signature',
    ]);
    // The form is the gateway's parameters, in the gateway's format; the deposit record is ours.
    expect(params[0]).toEqual({ name: 'amount', value: '150.50' });
    const record = await api.v3('/v3/auth/deposit', { currency: 'uah', amount: '150.50' });
    expect(record.json()).toMatchObject({ currency: 5, amount: '150.5' });
    const page = await submitForm(
      platform.gatewayUrl,
      action,
      Object.fromEntries(params.map((p: { name: string; value: string }) => [p.name, p.value])),
    );
    expect(page.status).toBe(200);
    expect(page.html).toContain('150.50');
  });
  it("opens the hosted page in the payer's language, from the Accept-Language of the deposit request", async () => {
    const user = await accountWithKey(platform.db, ['read']);
    const api = client(() => platform.exchange, user.apiKey, user.secret);
    const me = (await api.v3('/v3/auth/me')).json();
    // The simplified form carries it as a parameter: the page is Russian though the form is
    // submitted without any Accept-Language (as an app's web view or a server might).
    const form = (
      await api.v3(
        '/v3/auth/deposit',
        { currency: 'uah', amount: 300, payment_service: 'default' },
        { 'accept-language': 'de-DE, ru;q=0.9, en;q=0.5' },
      )
    ).json();
    expect(form.params).toContainEqual({ name: 'locale', value: 'ru' });
    const russian = await submitForm(
      platform.gatewayUrl,
      form.action,
      Object.fromEntries(form.params.map((p: { name: string; value: string }) => [p.name, p.value])),
    );
    expect(russian.html).toContain('Оплатить');
    // The regular deposit answers it for the client to send with the invoice.
    const deposit = (
      await api.v3('/v3/auth/deposit', { currency: 'uah', amount: 300 }, { 'accept-language': 'uk-UA' })
    ).json();
    expect(deposit.locale).toBe('uk');
    const invoice = await postJson(`${platform.gatewayUrl}/public-api/payment-invoices`, {
      public_key: me.public_keys.deposit_sdk_uah_public_key,
      reference_id: String(deposit.deposit_id),
      service: deposit.provider,
      currency: 'uah',
      amount: 300,
      expires: deposit.expires,
      signature: deposit.signature,
      locale: deposit.locale,
    });
    expect(invoice.status).toBe(201);
    const { action, payload } = invoice.json.data.active_payment;
    const ukrainian = await submitForm(
      platform.gatewayUrl,
      action,
      Object.fromEntries(payload.map((p: { name: string; value: string }) => [p.name, p.value])),
    );
    expect(ukrainian.html).toContain('Сплатити');
    // No language the page has: nothing asked, the gateway follows the payer's browser.
    const other = (
      await api.v3(
        '/v3/auth/deposit',
        { currency: 'uah', amount: 300, payment_service: 'default' },
        { 'accept-language': 'de-DE, fr;q=0.8, ru;q=0' },
      )
    ).json();
    expect(other.params.map((p: { name: string }) => p.name)).not.toContain('locale');
    expect(payerLocale('en-GB;q=0.5, uk;q=0.7')).toBe('uk');
    expect(payerLocale(undefined)).toBeUndefined();
  });
});
