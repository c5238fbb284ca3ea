import { beforeAll, describe, expect, it } from 'vitest';
import { accountWithKey, credit } from '../support/accounts.js';
import { type Client, client } from '../support/client.js';
import { usePostgresTarget } from '../support/targets.js';
import { useWalletApp } from './support.js';

const target = usePostgresTarget();
const w = useWalletApp(target);
let api: Client;
const ids: Record<string, number> = {};

/** Rows with fixed times: deposits and withdrawals in btc (id 1), xrp (4) and uah (fiat, 5). */
beforeAll(async () => {
  const user = await accountWithKey(w.db(), ['read', 'withdraw']);
  api = client(w.app, user.apiKey, user.secret);
  await credit(w.db(), user.account.id, 'btc', 10n ** 10n);
  const deposit = async (
    name: string,
    currency: string,
    amount: bigint,
    status: string,
    at: string,
    provider: string | null,
  ) => {
    const { rows } = await w.db().query<{ id: number }>(
      `INSERT INTO deposits (account_id, currency, amount, status, provider, address, txid, output_index, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, 0, $8) RETURNING id`,
      [
        user.account.id,
        currency,
        amount.toString(),
        status,
        provider,
        provider ? null : `addr-${name}`,
        provider ? null : `tx-${name}`,
        at,
      ],
    );
    ids[name] = rows[0]!.id;
  };
  await deposit('d1', 'btc', 5_000_000_000n, 'credited', '2024-01-01T00:00:00Z', null); // 0.5 btc
  await deposit('d2', 'xrp', 30_000_000n, 'pending', '2024-01-02T00:00:00Z', null); // 30 xrp
  await deposit('d3', 'uah', 100_000_000n, 'canceled', '2024-01-03T00:00:00Z', 'payment_card_uah'); // 100 uah
  await deposit('d4', 'btc', 1_000_000n, 'below_minimum', '2024-01-04T00:00:00Z', null); // 0.0001 btc
  const [made] = (
    await api.v3('/v3/auth/withdraw', {
      withdraw_type: 'btc',
      amount: '0.2',
      address: 'bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq',
    })
  ).json();
  ids.w1 = made.withdrawal_id;
  await w.db().query(`UPDATE withdrawals SET created_at = '2024-01-05T00:00:00Z' WHERE id = $1`, [ids.w1]);
});

const history = async (body: Record<string, unknown>, type = '') =>
  (await api.v3(`/v3/auth/assets-history${type}`, body)).json();

describe('assets history', () => {
  it('lists deposits and withdrawals newest first by default, with every field', async () => {
    const all = await history({});
    expect(all.total_items).toBe(5);
    expect(all.currencies).toEqual(['btc', 'uah', 'xrp']);
    expect(all.items.map((i: { id: number; type: string }) => `${i.type}:${i.id}`)).toEqual([
      `withdraw:${ids.w1}`,
      `deposit:${ids.d4}`,
      `deposit:${ids.d3}`,
      `deposit:${ids.d2}`,
      `deposit:${ids.d1}`,
    ]);
    expect(all.items[0]).toEqual({
      id: ids.w1,
      type: 'withdraw',
      created_at: '2024-01-05T00:00:00.000Z',
      destination: 'bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq',
      currency: 1,
      amount: 0.2,
      status: 'pending',
    });
    expect(all.items[2]).toMatchObject({
      destination: 'payment_card_uah',
      currency: 5,
      amount: 100,
      status: 'canceled',
    });
  });

  it('filters by type path, currency ids, statuses and dates (seconds, inclusive)', async () => {
    expect((await history({}, '/withdraws')).items.map((i: { id: number }) => i.id)).toEqual([ids.w1]);
    expect((await history({}, '/deposits')).total_items).toBe(4);
    expect((await history({ currency_ids: [4, 5] })).items.map((i: { id: number }) => i.id)).toEqual([
      ids.d3,
      ids.d2,
    ]);
    expect((await history({ statuses: ['done'] })).items.map((i: { id: number }) => i.id)).toEqual([ids.d1]);
    const canceled = await history({ statuses: ['canceled'] });
    expect(canceled.items.map((i: { id: number }) => i.id)).toEqual([ids.d4, ids.d3]);
    const day2 = Date.parse('2024-01-02T00:00:00Z') / 1000;
    const day3 = Date.parse('2024-01-03T00:00:00Z') / 1000;
    const ranged = await history({ date_from: day2, date_to: day3 });
    expect(ranged.items.map((i: { id: number }) => i.id)).toEqual([ids.d3, ids.d2]);
    expect(ranged.currencies).toEqual(['uah', 'xrp']);
    expect((await history({ currency_ids: [999] })).total_items).toBe(0);
  });

  it('pages and sorts by amount across currencies by value', async () => {
    const page1 = await history({ per_page: 2, page: 1, order_dir: 'asc' });
    const page2 = await history({ per_page: 2, page: 2, order_dir: 'asc' });
    const page4 = await history({ per_page: 2, page: 4, order_dir: 'asc' });
    expect(page1.items.map((i: { id: number }) => i.id)).toEqual([ids.d1, ids.d2]);
    expect(page2.items.map((i: { id: number }) => i.id)).toEqual([ids.d3, ids.d4]);
    expect(page4).toMatchObject({ total_items: 5, items: [] });
    const byAmount = await history({ order_by: 'amount', order_dir: 'desc' });
    expect(byAmount.items.map((i: { amount: number }) => i.amount)).toEqual([100, 30, 0.5, 0.2, 0.0001]);
  });

  it('refuses bad paging and filters with 400', async () => {
    for (const body of [
      { per_page: 101 },
      { per_page: 0 },
      { page: 0 },
      { statuses: ['done', 'lost'] },
      { order_by: 'id' },
      { order_dir: 'up' },
      { date_from: -1 },
      { currency_ids: ['btc'] },
    ]) {
      const response = await api.v3('/v3/auth/assets-history', body);
      expect(response.statusCode, JSON.stringify(body)).toBe(400);
      expect(response.json().error.name).toBe('validation_failed');
    }
    expect((await history({ per_page: 100 })).items).toHaveLength(5);
  });
});
