import { describe, expect, it } from 'vitest';
import { systemAccountId } from '../../src/accounts/store.js';
import { defaultPaygateConfig } from '../../src/config.js';
import { PaygateClient } from '../../src/fiat/client.js';
import { runFiatCommand } from '../../src/fiat/refunds/cli.js';
import { refundOfDeposit } from '../../src/fiat/refunds/store.js';
import { adjustment } from '../../src/ledger/entry.js';
import { reconcile } from '../../src/ledger/reconcile.js';
import { balancesOf, postEntry } from '../../src/ledger/store.js';
import { accountWithKey } from '../support/accounts.js';
import { client } from '../support/client.js';
import { reference } from '../support/targets.js';
import { formFields, postJson, signedCallback, submitForm } from './gateway-client.js';
import { eventually, useFiatPlatform } from './platform.js';

const platform = useFiatPlatform();
const UAH = 1_000_000n; // ledger minor units per hryvnia (ledger_precision 6)

async function uah(accountId: number) {
  const balance = (await balancesOf(platform.db, accountId)).find((b) => b.currency === 'uah');
  return { available: balance?.available ?? 0n, locked: balance?.locked ?? 0n };
}

/** A fiat deposit of `amount` UAH paid with the success card and credited. */
async function creditedDeposit(amount: number) {
  const user = await accountWithKey(platform.db, ['read']);
  const api = client(() => platform.exchange, user.apiKey, user.secret);
  const me = (await api.v3('/v3/auth/me')).json();
  const deposit = (await api.v3('/v3/auth/deposit', { currency: 'uah', amount })).json();
  const invoice = await postJson(`${platform.gatewayUrl}/public-api/payment-invoices`, {
    public_key: me.public_keys.deposit_sdk_uah_public_key,
    reference_id: String(deposit.deposit_id),
    service: deposit.provider,
    currency: 'uah',
    amount,
    // the exchange's signature of this form, answered with the deposit (README "Fiat deposits")
    expires: deposit.expires,
    signature: deposit.signature,
  });
  const { action, payload } = invoice.json.data.active_payment;
  const page = await submitForm(
    platform.gatewayUrl,
    action,
    Object.fromEntries(payload.map((p: { name: string; value: string }) => [p.name, p.value])),
  );
  const form = formFields(page.html, '/pay');
  await submitForm(platform.gatewayUrl, form.action, {
    ...form.fields,
    card_number: '4242424242424242',
    expiry: '12/39',
    cvc: '123',
  });
  await eventually(async () => {
    const { rows } = await platform.db.query<{ status: string }>(
      'SELECT status FROM deposits WHERE id = $1',
      [deposit.deposit_id],
    );
    return rows[0]?.status === 'credited' ? true : undefined;
  });
  return { accountId: user.account.id as number, depositId: deposit.deposit_id as number };
}

const deps = () => ({
  db: platform.db,
  reference,
  gateway: new PaygateClient({ ...defaultPaygateConfig(), url: platform.gatewayUrl, timeoutMs: 5_000 }),
});

describe('fiat refunds started by the operator', () => {
  it('debits the owner first, refunds through the gateway, settles on the callback; reconcile stays clean', async () => {
    const { accountId, depositId } = await creditedDeposit(300);
    expect(await uah(accountId)).toEqual({ available: 300n * UAH, locked: 0n });
    const started = (await runFiatCommand(deps(), 'refund', String(depositId))) as {
      refund: { status: string };
      gateway_status: string;
    };
    expect(started.gateway_status).toBe('processing');
    expect(await uah(accountId)).toEqual({ available: 0n, locked: 300n * UAH });
    await eventually(async () =>
      (await refundOfDeposit(platform.db, depositId))?.status === 'done' ? true : undefined,
    );
    expect(await uah(accountId)).toEqual({ available: 0n, locked: 0n });
    // Again: nothing more moves.
    const again = (await runFiatCommand(deps(), 'refund', String(depositId))) as { gateway_status: string };
    expect(again.gateway_status).toBe('already done');
    expect(await uah(accountId)).toEqual({ available: 0n, locked: 0n });
    expect((await reconcile(platform.db)).ok).toBe(true);
    const listed = (await runFiatCommand(deps(), 'refunds', undefined)) as { depositId: number }[];
    expect(listed.some((r) => r.depositId === depositId)).toBe(true);
  });

  it('refuses when the funds are no longer there, and records nothing', async () => {
    const { accountId, depositId } = await creditedDeposit(200);
    const external = await systemAccountId(platform.db, 'external');
    const spent = adjustment(accountId, external, 'uah', -150n * UAH, 'spent elsewhere');
    if (!spent.ok) throw new Error(spent.detail);
    await postEntry(platform.db, spent.entry);
    await expect(runFiatCommand(deps(), 'refund', String(depositId))).rejects.toThrow(/no longer covers/);
    expect(await refundOfDeposit(platform.db, depositId)).toBeUndefined();
    expect(await uah(accountId)).toEqual({ available: 50n * UAH, locked: 0n });
  });

  it('records a refund callback it did not start, shows it to the operator, and moves no money', async () => {
    const { accountId, depositId } = await creditedDeposit(100);
    const event = {
      event_id: 'ref_unknown000000000000:success',
      object: 'refund',
      id: 'ref_unknown000000000000',
      reference_id: 'merchant-made-refund-1',
      invoice_reference_id: String(depositId),
      status: 'success',
      currency: 'UAH',
      amount: '100.00',
      fee: '0.00',
      service: 'payment_card_uah_hpp',
      sequence: 2,
    };
    const signed = signedCallback(event);
    const answer = await platform.exchange.inject({
      method: 'POST',
      url: '/v3/paygate/callback',
      headers: signed.headers,
      payload: signed.text,
    });
    expect(answer.statusCode).toBe(200);
    expect(answer.json()).toEqual({ received: true, outcome: 'unsolicited' });
    expect(await uah(accountId)).toEqual({ available: 100n * UAH, locked: 0n });
    const shown = (await runFiatCommand(deps(), 'unsolicited', undefined)) as { reference_id: string }[];
    expect(shown.map((r) => r.reference_id)).toContain('merchant-made-refund-1');
  });
});
