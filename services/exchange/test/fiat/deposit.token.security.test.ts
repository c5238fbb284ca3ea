import { describe, expect, it } from 'vitest';
import { accountWithKey } from '../support/accounts.js';
import { client } from '../support/client.js';
import { postJson, submitForm } from './gateway-client.js';
import { useFiatPlatform } from './platform.js';

const platform = useFiatPlatform();

/**
 * Issue 28 item 2 and issue 41, end to end: a user deposits; a third party, with the public key from
 * their own account object and the user's deposit id (seen somewhere: ids are random, so not guessed),
 * repeats the invoice creation and the simplified form. They get no page token; the user's own form
 * still opens the page. And the next deposit id cannot be guessed from one's own.
 */
describe('a third party cannot get the payer page token of a fiat deposit', () => {
  it('refuses the third party the invoice of a deposit they did not make, in both flows', async () => {
    const payer = await accountWithKey(platform.db, ['read']);
    const payerApi = client(() => platform.exchange, payer.apiKey, payer.secret);
    const stranger = await accountWithKey(platform.db, ['read']);
    const strangerApi = client(() => platform.exchange, stranger.apiKey, stranger.secret);
    const publicKey = (await strangerApi.v3('/v3/auth/me')).json().public_keys.deposit_sdk_uah_public_key;

    // The payer's regular deposit and its invoice, created with the signed answer.
    const deposit = (await payerApi.v3('/v3/auth/deposit', { currency: 'uah', amount: 500 })).json();
    expect(deposit).toMatchObject({
      expires: expect.any(Number),
      signature: expect.stringMatching(/^[0-9a-f]{64}$/),
    });
    const body = {
      public_key: deposit.public_key,
      reference_id: String(deposit.deposit_id),
      description: 'deposit',
      service: deposit.provider,
      currency: 'uah',
      amount: 500,
    };
    const invoice = await postJson(`${platform.gatewayUrl}/public-api/payment-invoices`, {
      ...body,
      expires: deposit.expires,
      signature: deposit.signature,
    });
    expect(invoice.status).toBe(201);
    const token = invoice.json.data.active_payment.payload.find(
      (p: { name: string }) => p.name === 'token',
    ).value;

    // The third party's exact repeat: the documented body, the public key, the guessed reference.
    const repeat = await postJson(`${platform.gatewayUrl}/public-api/payment-invoices`, {
      ...body,
      public_key: publicKey,
    });
    expect(repeat.status).toBe(401);
    expect(JSON.stringify(repeat.json)).not.toContain(token);
    // ... and the next deposit id cannot be guessed from one's own: random, in 2^30..2^31-1.
    const strangers = (await strangerApi.v3('/v3/auth/deposit', { currency: 'uah', amount: 500 })).json();
    for (const id of [deposit.deposit_id, strangers.deposit_id]) {
      expect(id).toBeGreaterThanOrEqual(2 ** 30);
      expect(id).toBeLessThanOrEqual(2 ** 31 - 1);
    }
    expect(Math.abs(strangers.deposit_id - deposit.deposit_id)).toBeGreaterThan(1);

    // The payer's simplified deposit: the third party posts the same form without our signature.
    const form = (
      await payerApi.v3('/v3/auth/deposit', { currency: 'uah', amount: 250, payment_service: 'default' })
    ).json();
    const params = Object.fromEntries(
      form.params.map((p: { name: string; value: string }) => [p.name, p.value]),
    ) as Record<string, string>;
    const { signature: _signature, expires: _expires, ...unsigned } = params;
    const stolen = await submitForm(platform.gatewayUrl, form.action, unsigned);
    expect(stolen.status).toBe(403);
    const own = await submitForm(platform.gatewayUrl, form.action, params);
    expect(own.status).toBe(200);
    expect(own.html).toContain('250.00');
    // The third party's repeat after the payer opened the page gets nothing either.
    const after = await submitForm(platform.gatewayUrl, form.action, unsigned);
    expect(after.status).toBe(403);
    expect(after.html).not.toMatch(/name="token"/);
  });
});
