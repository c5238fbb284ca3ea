import { describe, expect, it } from 'vitest';
import { accountWithKey } from '../support/accounts.js';
import { client } from '../support/client.js';
import { deliverCallback, signedCallback } from './gateway-client.js';
import { useFiatPlatform } from './platform.js';

const platform = useFiatPlatform();

async function depositCount(accountId: number): Promise<number> {
  const { rows } = await platform.db.query<{ n: string }>(
    'SELECT count(*)::text AS n FROM deposits WHERE account_id = $1',
    [accountId],
  );
  return Number(rows[0]!.n);
}

describe('fiat deposit refusals', () => {
  it('refuses a crypto currency, excess decimals and amounts outside the service limits, recording nothing', async () => {
    const user = await accountWithKey(platform.db, ['read']);
    const api = client(() => platform.exchange, user.apiKey, user.secret);
    const cases: [unknown, number, string][] = [
      [{ currency: 'btc', amount: 1 }, 400, 'fiat_only'],
      [{ currency: 'uah', amount: '10.001' }, 400, 'too_many_decimals'],
      [{ currency: 'uah', amount: 5 }, 400, 'amount_out_of_limits'],
      [{ currency: 'uah', amount: 50_001 }, 400, 'amount_out_of_limits'],
      [{ currency: 'uah', amount: 100, payment_service: 'no_such_service' }, 400, 'unknown_service'],
      [{ currency: 'uah', amount: -100 }, 400, 'validation_failed'],
    ];
    for (const [body, status, name] of cases) {
      const response = await api.v3('/v3/auth/deposit', body);
      expect([response.statusCode, response.json().error?.name]).toEqual([status, name]);
    }
    expect(await depositCount(user.account.id)).toBe(0);
  });

  it('refuses forged and stale callbacks with 401 and unknown references with 404', async () => {
    const event = {
      event_id: 'inv_x:success',
      object: 'invoice',
      id: 'inv_x',
      reference_id: '999999',
      status: 'success',
      currency: 'UAH',
      amount: '500.00',
      fee: '7.50',
      service: 'payment_card_uah_hpp',
      test_mode: true,
      occurred_at: new Date().toISOString(),
    };
    const send = (signed: { text: string; headers: Record<string, string> }) =>
      platform.exchange.inject({
        method: 'POST',
        url: '/v3/paygate/callback',
        headers: signed.headers,
        payload: signed.text,
      });

    const forged = await send(signedCallback(event, 'not-the-merchant-secret'));
    expect(forged.statusCode).toBe(401);
    expect(forged.json().error).toMatchObject({ code: 3207, name: 'callback_refused' });
    const stale = await send(signedCallback(event, undefined, Date.now() - 10 * 60_000));
    expect(stale.statusCode).toBe(401);
    const good = signedCallback(event);
    const tampered = await send({ text: good.text.replace('500.00', '900.00'), headers: good.headers });
    expect(tampered.statusCode).toBe(401);
    const unsigned = await platform.exchange.inject({
      method: 'POST',
      url: '/v3/paygate/callback',
      headers: { 'content-type': 'application/json' },
      payload: good.text,
    });
    expect(unsigned.statusCode).toBe(401);
    const unknown = await send(good);
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json().error.name).toBe('unknown_reference');
  });

  it('refuses a paid invoice whose amount differs from the deposit, crediting nothing', async () => {
    const user = await accountWithKey(platform.db, ['read']);
    const api = client(() => platform.exchange, user.apiKey, user.secret);
    const deposit = (await api.v3('/v3/auth/deposit', { currency: 'uah', amount: 100 })).json();
    const signed = signedCallback({
      event_id: 'inv_y:success',
      object: 'invoice',
      id: 'inv_y',
      reference_id: String(deposit.deposit_id),
      status: 'success',
      currency: 'UAH',
      amount: '1000.00',
      fee: '15.00',
      service: 'payment_card_uah_hpp',
      test_mode: true,
      occurred_at: new Date().toISOString(),
    });
    const response = await platform.exchange.inject({
      method: 'POST',
      url: '/v3/paygate/callback',
      headers: signed.headers,
      payload: signed.text,
    });
    expect(response.statusCode).toBe(409);
    expect(response.json().error.name).toBe('callback_mismatch');
    const { rows } = await platform.db.query<{ status: string }>(
      'SELECT status FROM deposits WHERE id = $1',
      [deposit.deposit_id],
    );
    expect(rows[0]!.status).toBe('pending');
  });

  it("acknowledges and ignores the events of an invoice that is not a deposit's; refuses only a paid one", async () => {
    // Anyone can create an invoice at the gateway with the spec's unsigned body, for any reference
    // and amount: its events must neither touch a deposit nor pile up as retries at the gateway.
    const user = await accountWithKey(platform.db, ['read']);
    const api = client(() => platform.exchange, user.apiKey, user.secret);
    const deposit = (await api.v3('/v3/auth/deposit', { currency: 'uah', amount: 100 })).json();
    const event = (reference: string, status: string, amount: string, currency = 'UAH') => ({
      event_id: `inv_z${reference}${amount}${currency}:${status}`,
      object: 'invoice',
      id: `inv_z${reference}${amount}${currency}`,
      reference_id: reference,
      status,
      currency,
      amount,
      fee: '1.50',
      service: 'payment_card_uah_hpp',
      test_mode: true,
      occurred_at: new Date().toISOString(),
    });
    const send = (body: unknown) => deliverCallback(platform.exchange, body);
    const mine = String(deposit.deposit_id);
    for (const [reference, amount, currency] of [
      ['999999', '100.00', 'UAH'], // no such deposit
      [mine, '10.00', 'UAH'], // the deposit's reference, another amount
      [mine, '100.00', 'USD'], // another currency
    ] as const) {
      for (const status of ['created', 'attempt_failed', 'failed', 'expired']) {
        expect(await send(event(reference, status, amount, currency))).toEqual({
          status: 200,
          body: { received: true, outcome: 'ignored' },
        });
      }
      const paid = await send(event(reference, 'success', amount, currency));
      expect(paid.status).toBe(reference === mine ? 409 : 404);
    }
    const { rows } = await platform.db.query<{ status: string; external_id: string | null }>(
      'SELECT status, external_id FROM deposits WHERE id = $1',
      [deposit.deposit_id],
    );
    expect(rows[0]).toEqual({ status: 'pending', external_id: null });
  });

  it('answers 502 gateway_unavailable when the gateway does not answer, recording nothing', async () => {
    const user = await accountWithKey(platform.db, ['read']);
    const api = client(() => platform.exchange, user.apiKey, user.secret);
    await platform.gateway.stop();
    try {
      const response = await api.v3('/v3/auth/deposit', { currency: 'uah', amount: 100 });
      expect(response.statusCode).toBe(502);
      expect(response.json().error).toMatchObject({ code: 3201, name: 'gateway_unavailable' });
      expect(await depositCount(user.account.id)).toBe(0);
    } finally {
      await platform.restartGateway();
    }
  }, 90_000);

  it('the return page does not promise a credit for a reference the exchange does not know', async () => {
    const unknown = await platform.exchange.inject({
      method: 'GET',
      url: '/v3/paygate/return?reference_id=999999&invoice_id=inv_x&status=success',
    });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.body).toContain('Unknown deposit reference');
    expect(unknown.body).not.toContain('Payment received');
    const user = await accountWithKey(platform.db, ['read']);
    const api = client(() => platform.exchange, user.apiKey, user.secret);
    const created = await api.v3('/v3/auth/deposit', { currency: 'uah', amount: 500 });
    expect(created.statusCode).toBe(200);
    const known = await platform.exchange.inject({
      method: 'GET',
      url: `/v3/paygate/return?reference_id=${created.json().deposit_id}&status=success`,
    });
    expect(known.statusCode).toBe(200);
    expect(known.body).toContain('Payment received');
  });
});
