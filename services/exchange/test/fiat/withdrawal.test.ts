import { describe, expect, it } from 'vitest';
import { updateAccount } from '../../src/accounts/store.js';
import { defaultPaygateConfig } from '../../src/config.js';
import { PaygateClient } from '../../src/fiat/client.js';
import { balancesOf } from '../../src/ledger/store.js';
import { accountWithKey, credit } from '../support/accounts.js';
import { client } from '../support/client.js';
import { linksOf } from '../support/smtp-sink.js';
import { eventually, useFiatPlatform } from './platform.js';

const platform = useFiatPlatform();
const UAH = 1_000_000n; // ledger minor units per hryvnia (ledger_precision 6)

async function uah(accountId: number) {
  const balance = (await balancesOf(platform.db, accountId)).find((b) => b.currency === 'uah');
  return { available: balance?.available ?? 0n, locked: balance?.locked ?? 0n };
}

async function withdrawal(id: number) {
  const { rows } = await platform.db.query<{
    status: string;
    failure: string | null;
    details_box: string | null;
  }>('SELECT status, failure, details_box FROM withdrawals WHERE id = $1', [id]);
  return rows[0];
}

async function funded(amount: bigint) {
  const user = await accountWithKey(platform.db, ['read', 'withdraw']);
  await credit(platform.db, user.account.id, 'uah', amount);
  return { user, api: client(() => platform.exchange, user.apiKey, user.secret) };
}

const withdraw = (api: ReturnType<typeof client>, body: Record<string, unknown>) =>
  api.v3('/v3/auth/withdraw', { withdraw_type: 'uah', ...body });

describe('fiat withdrawals through the gateway', () => {
  it('pays 100 UAH to the success card: 101.50 locked, then settled; the card number is not kept', async () => {
    const { user, api } = await funded(1000n * UAH);
    const response = await withdraw(api, {
      amount: 100,
      gateway: 'payment_card_uah',
      fields: { card_number: '4242424242424242' },
    });
    expect(response.statusCode).toBe(200);
    const [result] = response.json();
    expect(result).toMatchObject({ status: 'pending', withdrawal_id: expect.any(Number) });
    const done = await eventually(async () => {
      const row = await withdrawal(result.withdrawal_id);
      return row?.status === 'done' ? row : undefined;
    });
    expect(done.details_box).toBeNull();
    expect(await uah(user.account.id)).toEqual({ available: 1000n * UAH - 101_500_000n, locked: 0n });
    const details = await api.v3('/v3/auth/withdraw/details', { id: result.withdrawal_id });
    expect(details.statusCode).toBe(200);
    expect(details.json()).toMatchObject({
      amount: '100',
      fee: '1.5',
      total_amount: '101.5',
      status: 'done',
      destination: expect.stringContaining('424242******4242'),
    });
  });

  it('takes the fee from the amount with withdrawall (1000 UAH at 1.5 %: 985.22 paid, fee 14.78)', async () => {
    const { user, api } = await funded(1000n * UAH);
    const response = await withdraw(api, {
      amount: 1000,
      withdrawall: 1,
      gateway: 'payment_card_uah',
      fields: { card_number: '4242424242424242' },
    });
    expect(response.statusCode).toBe(200);
    const [result] = response.json();
    await eventually(async () =>
      (await withdrawal(result.withdrawal_id))?.status === 'done' ? true : undefined,
    );
    const { rows } = await platform.db.query<{ amount: string; fee: string; total_amount: string }>(
      'SELECT amount::text, fee::text, total_amount::text FROM withdrawals WHERE id = $1',
      [result.withdrawal_id],
    );
    expect(rows[0]).toEqual({ amount: '985220000', fee: '14780000', total_amount: '1000000000' });
    expect(await uah(user.account.id)).toEqual({ available: 0n, locked: 0n });
  });

  it('charges the service fee clamped to its minimum (10 USD at 2 % + 1, min 2: 12 debited)', async () => {
    const user = await accountWithKey(platform.db, ['read', 'withdraw']);
    await credit(platform.db, user.account.id, 'usd', 50n * 100_000_000n);
    const api = client(() => platform.exchange, user.apiKey, user.secret);
    const response = await api.v3('/v3/auth/withdraw', {
      withdraw_type: 'usd',
      amount: '10',
      gateway: 'payment_card_usd',
      fields: { card_number: '4242424242424242' },
    });
    expect(response.statusCode).toBe(200);
    const [result] = response.json();
    await eventually(async () =>
      (await withdrawal(result.withdrawal_id))?.status === 'done' ? true : undefined,
    );
    expect((await api.v3('/v3/auth/withdraw/details', { id: result.withdrawal_id })).json()).toMatchObject({
      amount: '10',
      fee: '2',
      total_amount: '12',
      currency: 'usd',
    });
  });

  it('refuses an invalid card number, a missing field, an unknown gateway and limits before any money moves', async () => {
    const { user, api } = await funded(1000n * UAH);
    const cases: [Record<string, unknown>, string][] = [
      [
        { amount: 100, gateway: 'payment_card_uah', fields: { card_number: '4242424242424241' } },
        'invalid_field',
      ],
      [{ amount: 100, gateway: 'payment_card_uah', fields: { card_number: '4242' } }, 'invalid_field'],
      [{ amount: 100, gateway: 'payment_card_uah', fields: {} }, 'invalid_field'],
      [
        { amount: 100, gateway: 'payment_card_uah', fields: { card_number: '4242424242424242', x: '1' } },
        'invalid_field',
      ],
      [{ amount: 100, gateway: 'swift_uah', fields: { card_number: '4242424242424242' } }, 'unknown_service'],
      [
        { amount: 5, gateway: 'payment_card_uah', fields: { card_number: '4242424242424242' } },
        'amount_out_of_limits',
      ],
      [
        { amount: 990, gateway: 'payment_card_uah', fields: { card_number: '4242424242424242' } },
        'insufficient_funds',
      ],
      [{ amount: 100, fields: { card_number: '4242424242424242' } }, 'validation_failed'],
      [{ amount: 100, gateway: 'payment_card_uah', fund_source_id: 987654 }, 'fund_source_not_found'],
    ];
    for (const [body, name] of cases) {
      const response = await withdraw(api, body);
      expect([response.statusCode, response.json().error?.name]).toEqual([
        name === 'fund_source_not_found' ? 404 : 400,
        name,
      ]);
    }
    expect(await uah(user.account.id)).toEqual({ available: 1000n * UAH, locked: 0n });
    const { rows } = await platform.db.query('SELECT id FROM withdrawals WHERE account_id = $1', [
      user.account.id,
    ]);
    expect(rows).toEqual([]);
  });

  it('releases the funds when the payout fails at the processor', async () => {
    const { user, api } = await funded(500n * UAH);
    const response = await withdraw(api, {
      amount: 100,
      gateway: 'payment_card_uah',
      fields: { card_number: '4000000000000119' },
    });
    expect(response.statusCode).toBe(200);
    const [result] = response.json();
    const failed = await eventually(async () => {
      const row = await withdrawal(result.withdrawal_id);
      return row?.status === 'failed' ? row : undefined;
    });
    expect(failed.failure).toMatch(/processor/);
    expect(await uah(user.account.id)).toEqual({ available: 500n * UAH, locked: 0n });
    expect((await api.v3('/v3/auth/withdraw/details', { id: result.withdrawal_id })).json().status).toBe(
      'canceled',
    );
    const history = (await api.v3('/v3/auth/assets-history/withdraws', {})).json();
    expect(history.items).toContainEqual(
      expect.objectContaining({ id: result.withdrawal_id, type: 'withdraw', status: 'canceled' }),
    );
  });

  it('pays to a saved fund source, added through the API and shown masked', async () => {
    const { user, api } = await funded(500n * UAH);
    const added = await api.v3('/v3/auth/fund_sources/add', {
      currency: 'uah',
      gateway: 'payment_card_uah',
      fields: { card_number: '4242424242424242' },
      label: 'salary card',
    });
    expect(added.statusCode).toBe(200);
    expect(added.json()).toMatchObject({ fields: { card_number: '424242******4242' }, label: 'salary card' });
    const badCard = await api.v3('/v3/auth/fund_sources/add', {
      currency: 'uah',
      gateway: 'payment_card_uah',
      fields: { card_number: 'abc' },
    });
    expect(badCard.json().error.name).toBe('invalid_field');
    const response = await withdraw(api, { amount: 100, fund_source_id: added.json().id });
    expect(response.statusCode).toBe(200);
    const [result] = response.json();
    await eventually(async () =>
      (await withdrawal(result.withdrawal_id))?.status === 'done' ? true : undefined,
    );
    expect(await uah(user.account.id)).toEqual({ available: 500n * UAH - 101_500_000n, locked: 0n });
  });

  it('pays a withdrawal once when its payout is sent again (the resend after a crash or a lost answer)', async () => {
    const { user, api } = await funded(500n * UAH);
    const response = await withdraw(api, {
      amount: 100,
      gateway: 'payment_card_uah',
      fields: { card_number: '4242424242424242' },
    });
    const id: number = response.json()[0].withdrawal_id;
    await eventually(async () => ((await withdrawal(id))?.status === 'done' ? true : undefined));
    // What the dispatcher does with a request it finds `sending` after a restart: the same reference again.
    const gateway = new PaygateClient({ ...defaultPaygateConfig(), url: platform.gatewayUrl });
    const first = await gateway.payoutStatus(String(id));
    const again = await gateway.createPayout({
      reference_id: String(id),
      service: 'payment_card_uah',
      currency: 'UAH',
      amount: '100.00',
      fields: { card_number: '4242424242424242' },
    });
    expect(again.ok && again.status).toBe(200);
    expect(again.ok && first.ok && again.value.id === first.value.id).toBe(true);
    expect(await uah(user.account.id)).toEqual({ available: 500n * UAH - 101_500_000n, locked: 0n });
  });

  it('honours withdraw_confirmation: nothing is sent before the mailed link confirms; cancel and expiry release', async () => {
    const { user, api } = await funded(500n * UAH);
    await updateAccount(platform.db, user.account.id, { withdrawConfirmation: true });
    const body = { amount: 100, gateway: 'payment_card_uah', fields: { card_number: '4242424242424242' } };
    const mailed = async () => {
      const [result] = (await withdraw(api, body)).json();
      expect(result).toMatchObject({ status: 'awaiting_confirmation' });
      const mail = await platform.mail.waitFor(
        (m) => m.subject?.includes(`(request ${result.withdrawal_id})`) === true,
      );
      expect(mail.text).toContain('payment_card_uah 424242******4242');
      expect(mail.text).not.toContain('4242424242424242');
      const [confirm, cancel] = linksOf(mail);
      return { id: result.withdrawal_id as number, confirm: confirm!, cancel: cancel! };
    };
    const first = await mailed();
    const second = await mailed();
    const third = await mailed();
    expect(await uah(user.account.id)).toEqual({
      available: 500n * UAH - 304_500_000n,
      locked: 304_500_000n,
    });
    // The readiness signal that the dispatcher went past the three: a request of another account,
    // needing no confirmation, queued after them and paid by a round that also saw them.
    const control = await funded(500n * UAH);
    const [queued] = (
      await withdraw(control.api, { ...body, fields: { card_number: '4242424242424242' } })
    ).json();
    expect(queued).toMatchObject({ status: 'pending' });
    await eventually(async () =>
      (await withdrawal(queued.withdrawal_id))?.status === 'done' ? true : undefined,
    );
    for (const waiting of [first, second, third]) {
      expect((await withdrawal(waiting.id))?.status).toBe('awaiting_confirmation');
    }

    // A GET only shows the page; the POST of the confirm link queues it and the dispatcher pays it.
    expect((await fetch(first.confirm)).status).toBe(200);
    expect((await withdrawal(first.id))?.status).toBe('awaiting_confirmation');
    expect(
      (await fetch(first.confirm, { method: 'POST', headers: { accept: 'application/json' } })).status,
    ).toBe(200);
    await eventually(async () => ((await withdrawal(first.id))?.status === 'done' ? true : undefined));
    expect(
      (await fetch(first.confirm, { method: 'POST', headers: { accept: 'application/json' } })).status,
    ).toBe(410);
    // Cancelled by its link: funds back at once.
    expect(
      (await fetch(second.cancel, { method: 'POST', headers: { accept: 'application/json' } })).status,
    ).toBe(200);
    expect((await withdrawal(second.id))?.status).toBe('canceled');
    // Never confirmed: once it expires, its funds come back.
    await platform.db.query(
      `UPDATE withdrawals SET confirm_expires_at = now() - interval '1 second' WHERE id = $1`,
      [third.id],
    );
    await eventually(async () => ((await withdrawal(third.id))?.status === 'expired' ? true : undefined));
    expect(await uah(user.account.id)).toEqual({ available: 500n * UAH - 101_500_000n, locked: 0n });
  });
});
