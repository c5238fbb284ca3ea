import { describe, expect, it } from 'vitest';
import { defaultPaygateConfig } from '../../src/config.js';
import { PaygateClient } from '../../src/fiat/client.js';
import { expireStaleFiatDeposits } from '../../src/fiat/deposit-expiry.js';
import { accountWithKey } from '../support/accounts.js';
import { client } from '../support/client.js';
import { reference } from '../support/targets.js';
import { postJson } from './gateway-client.js';
import { eventually, useFiatPlatform } from './platform.js';

const platform = useFiatPlatform();

async function status(id: number) {
  const { rows } = await platform.db.query<{ status: string }>('SELECT status FROM deposits WHERE id = $1', [
    id,
  ]);
  return rows[0]?.status;
}

const expiryDeps = () => ({
  db: platform.db,
  reference,
  gateway: new PaygateClient({ ...defaultPaygateConfig(), url: platform.gatewayUrl, timeoutMs: 5_000 }),
});

describe('pending fiat deposits expire', () => {
  it('cancels a stale deposit the gateway has no invoice for, and leaves one with an invoice to it', async () => {
    const user = await accountWithKey(platform.db, ['read']);
    const api = client(() => platform.exchange, user.apiKey, user.secret);
    const lonely = (await api.v3('/v3/auth/deposit', { currency: 'uah', amount: 100 })).json();
    const invoiced = (await api.v3('/v3/auth/deposit', { currency: 'uah', amount: 100 })).json();
    const created = await postJson(`${platform.gatewayUrl}/public-api/payment-invoices`, {
      public_key: 'pk_test_exchange_uah',
      reference_id: String(invoiced.deposit_id),
      service: invoiced.provider,
      currency: 'uah',
      amount: 100,
      // the exchange's signature of this form, answered with the deposit (README "Fiat deposits")
      expires: invoiced.expires,
      signature: invoiced.signature,
    });
    expect(created.status).toBe(201);
    const deps = expiryDeps();
    // Not stale yet under a long time to live.
    expect(await expireStaleFiatDeposits(deps, 3_600_000)).not.toContain(lonely.deposit_id);
    // The invoiced one may not have called back yet: the gateway is asked, and it has the invoice.
    const canceled = await expireStaleFiatDeposits(deps, 0);
    expect(canceled).toContain(lonely.deposit_id);
    expect(canceled).not.toContain(invoiced.deposit_id);
    expect(await status(lonely.deposit_id)).toBe('canceled');
    await eventually(async () => ((await status(invoiced.deposit_id)) === 'pending' ? true : undefined));
    const gone = await api.v3('/v3/auth/deposit/details', { id: lonely.deposit_id });
    expect(gone.json()).toMatchObject({ status: 'canceled' });
  });

  it("cancels a stale deposit whose reference holds someone else's invoice of another amount", async () => {
    const user = await accountWithKey(platform.db, ['read']);
    const api = client(() => platform.exchange, user.apiKey, user.secret);
    const deposit = (await api.v3('/v3/auth/deposit', { currency: 'uah', amount: 100 })).json();
    // A third party got the reference first, with the spec's unsigned body and its own amount.
    const squatted = await postJson(`${platform.gatewayUrl}/public-api/payment-invoices`, {
      public_key: 'pk_test_exchange_uah',
      reference_id: String(deposit.deposit_id),
      description: 'not the payer',
      service: deposit.provider,
      currency: 'uah',
      amount: 20,
    });
    expect(squatted.status).toBe(201);
    // Its created event reached us and was ignored: nothing recorded on the deposit.
    await eventually(async () => {
      const { rows } = await platform.db.query<{ outcome: string }>(
        `SELECT outcome FROM paygate_events WHERE object = 'invoice' AND reference_id = $1`,
        [String(deposit.deposit_id)],
      );
      return rows[0]?.outcome === 'ignored' ? true : undefined;
    });
    expect(await status(deposit.deposit_id)).toBe('pending');
    expect(await expireStaleFiatDeposits(expiryDeps(), 0)).toContain(deposit.deposit_id);
    expect(await status(deposit.deposit_id)).toBe('canceled');
  });
});
