import { describe, expect, it } from 'vitest';
import { accountWithKey, credit } from '../support/accounts.js';
import { client } from '../support/client.js';
import { usePostgresTarget } from '../support/targets.js';
import { balanceMap, expectReconciled, useWalletApp } from './support.js';

const target = usePostgresTarget();
const w = useWalletApp(target);
const BTC_ADDRESS = 'bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq';
const XRP_ADDRESS = 'rHb9CJAWyB4rj91VRWn96DkukG4bwdtyTh';

async function funded() {
  const user = await accountWithKey(w.db(), ['read', 'withdraw']);
  await credit(w.db(), user.account.id, 'btc', 10n ** 10n); // 1 btc
  await credit(w.db(), user.account.id, 'xrp', 100_000_000n); // 100 xrp
  return { user, api: client(w.app, user.apiKey, user.secret) };
}

const refusals: [string, Record<string, unknown>, number, string][] = [
  [
    'an invalid address',
    { withdraw_type: 'btc', amount: '0.01', address: 'bc1qnotanaddress' },
    400,
    'invalid_address',
  ],
  [
    'an address with a broken checksum',
    { withdraw_type: 'btc', amount: '0.01', address: 'bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdr' },
    400,
    'invalid_address',
  ],
  [
    'an address of another coin',
    { withdraw_type: 'btc', amount: '0.01', address: XRP_ADDRESS },
    400,
    'invalid_address',
  ],
  ['no address', { withdraw_type: 'btc', amount: '0.01' }, 400, 'invalid_address'],
  [
    'a memo on a currency without memos',
    { withdraw_type: 'btc', amount: '0.01', address: BTC_ADDRESS, payment_id: '123' },
    400,
    'invalid_memo',
  ],
  [
    'a blank memo without allow_blank_memo',
    { withdraw_type: 'xrp', amount: '30', address: XRP_ADDRESS, payment_id: '' },
    400,
    'invalid_memo',
  ],
  [
    'no memo without allow_blank_memo',
    { withdraw_type: 'xrp', amount: '30', address: XRP_ADDRESS },
    400,
    'invalid_memo',
  ],
  [
    'a non-numeric destination tag',
    { withdraw_type: 'xrp', amount: '30', address: XRP_ADDRESS, payment_id: 'abc' },
    400,
    'invalid_memo',
  ],
  [
    'an amount below min_withdraw',
    { withdraw_type: 'btc', amount: '0.0009', address: BTC_ADDRESS },
    400,
    'amount_below_minimum',
  ],
  [
    'withdrawall leaving less than min_withdraw',
    { withdraw_type: 'btc', amount: '0.0012', address: BTC_ADDRESS, withdrawall: true },
    400,
    'amount_below_minimum',
  ],
  [
    'an amount above the balance',
    { withdraw_type: 'btc', amount: '1', address: BTC_ADDRESS },
    400,
    'insufficient_funds',
  ],
  [
    'a non-numeric amount',
    { withdraw_type: 'btc', amount: 'lots', address: BTC_ADDRESS },
    400,
    'validation_failed',
  ],
  [
    'a negative amount',
    { withdraw_type: 'btc', amount: -0.5, address: BTC_ADDRESS },
    400,
    'validation_failed',
  ],
  ['a zero amount', { withdraw_type: 'btc', amount: 0, address: BTC_ADDRESS }, 400, 'validation_failed'],
  [
    'an over-precise amount',
    { withdraw_type: 'btc', amount: '0.001000001', address: BTC_ADDRESS },
    400,
    'too_many_decimals',
  ],
  [
    'an amount of the wrong type',
    { withdraw_type: 'btc', amount: { value: 1 }, address: BTC_ADDRESS },
    400,
    'validation_failed',
  ],
  [
    'an unknown currency',
    { withdraw_type: 'doge', amount: '1', address: BTC_ADDRESS },
    404,
    'unknown_currency',
  ],
  [
    // Fiat goes to the fiat side (src/fiat/), which refuses a crypto address before asking the gateway.
    'a fiat currency with a crypto address',
    { withdraw_type: 'uah', amount: '100', address: BTC_ADDRESS },
    400,
    'validation_failed',
  ],
];

describe('withdrawal refusals leave balances untouched', () => {
  for (const [what, body, status, name] of refusals) {
    it(`refuses ${what}`, async () => {
      const { user, api } = await funded();
      const before = await balanceMap(w.db(), user.account.id);
      const response = await api.v3('/v3/auth/withdraw', body);
      expect(response.statusCode).toBe(status);
      expect(response.json().error.name).toBe(name);
      expect(await balanceMap(w.db(), user.account.id)).toEqual(before);
      const { rows } = await w
        .db()
        .query('SELECT id FROM withdrawals WHERE account_id = $1', [user.account.id]);
      expect(rows).toEqual([]);
    });
  }

  it('accepts a blank xrp memo with allow_blank_memo and a tag otherwise', async () => {
    const { user, api } = await funded();
    const blank = await api.v3('/v3/auth/withdraw', {
      withdraw_type: 'xrp',
      amount: '30',
      address: XRP_ADDRESS,
      allow_blank_memo: true,
    });
    expect(blank.statusCode).toBe(200);
    const tagged = await api.v3('/v3/auth/withdraw', {
      withdraw_type: 'xrp',
      amount: '30',
      address: XRP_ADDRESS,
      payment_id: '4294967295',
    });
    expect(tagged.statusCode).toBe(200);
    // 2 x (30 + 0.25 fee) locked
    expect((await balanceMap(w.db(), user.account.id)).xrp).toEqual([
      100_000_000n - 60_500_000n,
      60_500_000n,
    ]);
    await expectReconciled(w.db());
  });

  it('needs the withdraw scope', async () => {
    const user = await accountWithKey(w.db(), ['read', 'trade']);
    await credit(w.db(), user.account.id, 'btc', 10n ** 10n);
    const response = await client(w.app, user.apiKey, user.secret).v3('/v3/auth/withdraw', {
      withdraw_type: 'btc',
      amount: '0.01',
      address: BTC_ADDRESS,
    });
    expect(response.statusCode).toBe(403);
    expect((await balanceMap(w.db(), user.account.id)).btc).toEqual([10n ** 10n, 0n]);
  });

  it("answers 404 for another account's deposit and withdrawal ids, leaking nothing", async () => {
    const owner = await funded();
    const [made] = (
      await owner.api.v3('/v3/auth/withdraw', { withdraw_type: 'btc', amount: '0.01', address: BTC_ADDRESS })
    ).json();
    await owner.api.v3('/v3/auth/payment_addresses', { currency: 'btc' });
    const { address } = (await owner.api.v3('/v3/auth/deposit/info', { currency: 'btc' })).json();
    const { rows } = await w.db().query<{ id: number }>(
      `INSERT INTO deposits (account_id, currency, amount, status, address, txid, output_index, confirmations)
       VALUES ($1, 'btc', 5, 'pending', $2, 'aa', 0, 0) RETURNING id`,
      [owner.user.account.id, address],
    );
    const other = await funded();
    const before = await balanceMap(w.db(), other.user.account.id);
    const foreignW = await other.api.v3('/v3/auth/withdraw/details', { id: made.withdrawal_id });
    const missingW = await other.api.v3('/v3/auth/withdraw/details', { id: 2_000_000_000 });
    expect(foreignW.statusCode).toBe(404);
    expect(foreignW.json()).toEqual(missingW.json());
    const foreignD = await other.api.v3('/v3/auth/deposit/details', { id: rows[0]!.id });
    const missingD = await other.api.v3('/v3/auth/deposit/details', { id: 2_000_000_000 });
    expect(foreignD.statusCode).toBe(404);
    expect(foreignD.json()).toEqual(missingD.json());
    expect((await other.api.v3('/v3/auth/assets-history', {})).json()).toEqual({
      total_items: 0,
      items: [],
      currencies: [],
    });
    expect((await owner.api.v3('/v3/auth/assets-history', {})).json()).toMatchObject({ total_items: 2 });
    expect(await balanceMap(w.db(), other.user.account.id)).toEqual(before);
    expect((await other.api.v3('/v3/auth/deposit/details', { id: 'x' })).statusCode).toBe(400);
  });

  it('refuses deposit methods for fiat and unknown currencies', async () => {
    const { api } = await funded();
    expect((await api.v3('/v3/auth/deposit/info', { currency: 'uah' })).json().error.name).toBe('not_a_coin');
    expect((await api.v3('/v3/auth/payment_addresses', { currency: 'doge' })).json().error.name).toBe(
      'unknown_currency',
    );
  });
});
