import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import type { App } from '../../src/http/typed.js';
import { accountWithKey, credit } from '../support/accounts.js';
import { type Client, client } from '../support/client.js';
import { reference, secretBox, usePostgresTarget } from '../support/targets.js';

type V3Order = [number, ...unknown[]];

/** Paging of the active-orders lists: v3 by `limit` + `before_id`, v2 by `limit` + `page`. */
describe('order list paging (postgres)', () => {
  const target = usePostgresTarget();
  let app: App;
  let trader: Client;
  /** Ids of the trader's resting orders, newest first: 5 in btcuah, then 2 in ethuah. */
  const btc: number[] = [];
  let all: number[] = [];

  beforeAll(async () => {
    app = await buildApp({ db: target.db(), reference, secretBox });
    const { account, apiKey, secret } = await accountWithKey(target.db(), ['read', 'trade']);
    await credit(target.db(), account.id, 'uah', 10n ** 15n);
    trader = client(() => app, apiKey, secret);
    const place = async (market: string, price: string) => {
      const placed = await trader.v2Post('/api/v2/orders', { market, side: 'buy', volume: '0.01', price });
      expect(placed.statusCode).toBe(201);
      return placed.json().id as number;
    };
    for (const price of ['100', '101', '102', '103', '104']) btc.unshift(await place('btcuah', price));
    const eth = [await place('ethuah', '50'), await place('ethuah', '51')].reverse();
    all = [...eth, ...btc];
  });
  afterAll(async () => {
    await app?.close();
  });

  it('v3: `{}` answers every order as before, saying there is no more', async () => {
    const response = await trader.v3('/v3/auth/r/orders', {});
    expect(response.json().map((o: V3Order) => o[0])).toEqual(all);
    expect(response.headers['x-has-more']).toBe('false');
    expect(response.headers['x-next-before-id']).toBeUndefined();
  });

  it('v3: following x-next-before-id walks the whole list once, per market too', async () => {
    for (const [path, expected] of [
      ['/v3/auth/r/orders', all],
      ['/v3/auth/r/orders/btcuah', btc],
    ] as const) {
      const seen: number[] = [];
      let body: { limit: number; before_id?: number } = { limit: 2 };
      for (let pages = 1; ; pages += 1) {
        expect(pages).toBeLessThanOrEqual(expected.length); // a cursor that does not move fails here
        const response = await trader.v3(path, body);
        expect(response.statusCode).toBe(200);
        const ids = response.json().map((o: V3Order) => o[0]);
        seen.push(...ids);
        if (response.headers['x-has-more'] === 'false') {
          expect(pages).toBe(Math.ceil(expected.length / 2));
          break;
        }
        expect(response.headers['x-has-more']).toBe('true');
        expect(ids).toHaveLength(2);
        body = { limit: 2, before_id: Number(response.headers['x-next-before-id']) };
      }
      expect(seen).toEqual(expected);
    }
  });

  it('v3: refuses a limit or before_id below 1', async () => {
    for (const body of [{ limit: 0 }, { before_id: 0 }, { limit: 'many' }]) {
      const response = await trader.v3('/v3/auth/r/orders', body);
      expect([response.statusCode, response.json().error.name]).toEqual([400, 'validation_failed']);
    }
  });

  it('v2: pages of `limit` by `page`, with x-next-page while there is more', async () => {
    const first = await trader.v2Get('/api/v2/orders', { market: 'btcuah' });
    expect(first.json().map((o: { id: number }) => o.id)).toEqual(btc);
    expect(first.headers['x-has-more']).toBe('false');
    const seen: number[] = [];
    let page = '1';
    for (;;) {
      expect(Number(page)).toBeLessThanOrEqual(btc.length);
      const response = await trader.v2Get('/api/v2/orders.json', { market: 'btcuah', limit: '2', page });
      seen.push(...response.json().map((o: { id: number }) => o.id));
      if (response.headers['x-has-more'] === 'false') break;
      page = String(response.headers['x-next-page']);
    }
    expect(seen).toEqual(btc);
    expect(page).toBe('3');
    for (const bad of ['0', '1001', 'x']) {
      const response = await trader.v2Get('/api/v2/orders', { market: 'btcuah', page: bad });
      expect([response.statusCode, response.json().error.name]).toEqual([400, 'validation_failed']);
    }
  });

  it('the 1,001st active order is no longer silently cut: the default page says there is more', async () => {
    const { account, apiKey, secret } = await accountWithKey(target.db(), ['read']);
    // Rows only (the lists read the orders table): far above the ids the order service hands out.
    await target.db().query(
      `INSERT INTO orders (id, market, account_id, side, kind, price, amount, state, created_at, updated_at)
       SELECT 50000000 + n, 'btcuah', $1, 'buy', 'limit', 100, 10000, 'wait', 0, 0 FROM generate_series(1, 1001) n`,
      [account.id],
    );
    const reader = client(() => app, apiKey, secret);
    const v3 = await reader.v3('/v3/auth/r/orders', {});
    expect(v3.json()).toHaveLength(1000);
    expect(v3.headers['x-has-more']).toBe('true');
    expect(v3.headers['x-next-before-id']).toBe('50000002');
    const rest = await reader.v3('/v3/auth/r/orders', { before_id: 50000002 });
    expect(rest.json().map((o: V3Order) => o[0])).toEqual([50000001]);
    expect(rest.headers['x-has-more']).toBe('false');
    const v2 = await reader.v2Get('/api/v2/orders', { market: 'btcuah', limit: '1000' });
    expect([v2.json().length, v2.headers['x-has-more'], v2.headers['x-next-page']]).toEqual([
      1000,
      'true',
      '2',
    ]);
    const last = await reader.v2Get('/api/v2/orders', { market: 'btcuah', limit: '1000', page: '2' });
    expect([last.json().length, last.headers['x-has-more']]).toEqual([1, 'false']);
  });
});
