import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemAccountId } from '../../src/accounts/store.js';
import { buildApp } from '../../src/app.js';
import type { App } from '../../src/http/typed.js';
import { reconcile } from '../../src/ledger/reconcile.js';
import { balancesOf } from '../../src/ledger/store.js';
import { DEMO_ACCOUNTS, seedDemo } from '../../src/seed.js';
import { type Client, client } from '../support/client.js';
import { clientSignV2, nextNonce, v3Headers } from '../support/signing.js';
import { reference, secretBox, type Target } from '../support/targets.js';

const FEES = { makerFeePpm: 1_000, takerFeePpm: 2_000 };

async function balance(target: Target, accountId: number, currency: string) {
  const found = (await balancesOf(target.db(), accountId)).find((b) => b.currency === currency);
  return { available: found?.available ?? 0n, locked: found?.locked ?? 0n };
}

/** Order entry, queries, cancels and market data through HTTP, over PostgreSQL and PGlite. */
export function tradingContract(target: Target): void {
  describe(`trading (${target.name})`, () => {
    let app: App;
    let demo: Client;
    let demoId: number;
    let other: Client;
    let otherId: number;
    let otherKey: { apiKey: string; secret: string };

    beforeAll(async () => {
      app = await buildApp({ db: target.db(), reference, secretBox, fees: FEES });
      const demoDir = mkdtempSync(path.join(tmpdir(), 'exchange-demo-'));
      const seeded = await seedDemo(target.db(), secretBox, reference, demoDir);
      demo = client(() => app, seeded.apiKey, seeded.apiSecret);
      demoId = seeded.accountId;
      // The second seeded demo account: a trade needs two accounts (self-trade prevention).
      const second = await seedDemo(target.db(), secretBox, reference, demoDir, DEMO_ACCOUNTS[1]);
      other = client(() => app, second.apiKey, second.apiSecret);
      otherKey = { apiKey: second.apiKey, secret: second.apiSecret };
      otherId = second.accountId;
    });
    afterAll(async () => {
      await app?.close();
    });

    it('new user: a v2 buy and a crossing v2 sell trade; trades, ticker, book and wallets follow, with fees', async () => {
      const feesId = await systemAccountId(target.db(), 'fees');
      const feesBefore = {
        btc: await balance(target, feesId, 'btc'),
        uah: await balance(target, feesId, 'uah'),
      };
      const demoUah = await balance(target, demoId, 'uah');
      const demoBtc = await balance(target, demoId, 'btc');
      const buy = await demo.v2Post('/api/v2/orders', {
        market: 'btcuah',
        side: 'buy',
        volume: '0.5',
        price: '1500000',
      });
      expect(buy.statusCode).toBe(201);
      const buyOrder = buy.json();
      expect(buyOrder).toMatchObject({
        side: 'buy',
        ord_type: 'limit',
        price: '1500000',
        state: 'wait',
        market: 'btcuah',
        volume: '0.5',
        remaining_volume: '0.5',
        executed_volume: '0',
        trades_count: 0,
      });
      // 750000 UAH locked (ledger precision 6).
      expect(await balance(target, demoId, 'uah')).toEqual({
        available: demoUah.available - 750_000n * 10n ** 6n,
        locked: demoUah.locked + 750_000n * 10n ** 6n,
      });
      const book = await app.inject({ method: 'GET', url: '/v3/book/btcuah' });
      expect(book.json()).toEqual([[1500000, 0.5, 1]]);

      const sell = await other.v2Post('/api/v2/orders.json', {
        market: 'btcuah',
        side: 'sell',
        volume: '0.2',
        price: '1400000',
      });
      expect(sell.statusCode).toBe(201);
      expect(sell.json()).toMatchObject({
        state: 'done',
        executed_volume: '0.2',
        avg_price: '1500000',
        trades_count: 1,
      });

      const trades = await demo.v3(`/v3/auth/r/order/btcuah:${buyOrder.id}/trades`);
      expect(trades.statusCode).toBe(200);
      const [trade] = trades.json();
      // The buyer is the maker: 0.1 % of 0.2 BTC = 0.0002 BTC fee.
      expect(trade).toEqual([
        expect.any(Number),
        'btcuah',
        expect.any(Number),
        buyOrder.id,
        '0.2',
        '1500000',
        null,
        null,
        1,
        '0.0002',
        'btc',
      ]);
      const sellerTrades = await other.v3(`/v3/auth/r/order/btcuah:${sell.json().id}/trades`);
      // The seller is the taker: 0.2 % of 300000 UAH = 600 UAH.
      expect(sellerTrades.json()[0]).toEqual([
        trade[0],
        'btcuah',
        trade[2],
        sell.json().id,
        '0.2',
        '1500000',
        null,
        null,
        -1,
        '600',
        'uah',
      ]);

      const tickers = await app.inject({ method: 'GET', url: '/v3/tickers?symbols=btcuah' });
      expect(tickers.json()).toEqual([['btcuah', 1500000, 0.3, 0, 0, 0, 0, 1500000, 0.2, 1500000, 1500000]]);
      const all = await app.inject({ method: 'GET', url: '/v3/tickers?symbols=ALL' });
      expect(all.json()).toHaveLength(reference.markets.length);
      expect(all.json().every((t: unknown[]) => t.length === 11)).toBe(true);
      expect((await app.inject({ method: 'GET', url: '/v3/book/btcuah' })).json()).toEqual([
        [1500000, 0.3, 1],
      ]);
      const v2Ticker = await app.inject({ method: 'GET', url: '/api/v2/tickers/btcuah.json' });
      expect(v2Ticker.json().ticker).toMatchObject({
        buy: '1500000',
        last: '1500000',
        vol: '0.2',
        amount: '300000',
      });
      const depth = await app.inject({ method: 'GET', url: '/api/v2/depth?market=btcuah' });
      expect(depth.json()).toMatchObject({ asks: [], bids: [['1500000', '0.3']] });
      const publicTrades = await app.inject({ method: 'GET', url: '/api/v2/trades.json?market=btcuah' });
      expect(publicTrades.json()[0]).toMatchObject({
        price: '1500000',
        volume: '0.2',
        funds: '300000',
        side: null,
      });
      const mine = await demo.v2Get('/api/v2/trades/my', { market: 'btcuah' });
      expect(mine.json()[0]).toMatchObject({ side: 'bid', order_id: buyOrder.id, volume: '0.2' });

      // Wallets: the buyer paid 300000 UAH (still 450000 locked) and got 0.1998 BTC; the seller got 299400 UAH.
      expect(await balance(target, demoId, 'uah')).toEqual({
        available: demoUah.available - 750_000n * 10n ** 6n,
        locked: demoUah.locked + 450_000n * 10n ** 6n,
      });
      expect((await balance(target, demoId, 'btc')).available).toBe(demoBtc.available + 1_998_000_000n);
      expect(await balance(target, otherId, 'uah')).toEqual({
        available: 1_000_000n * 10n ** 6n + 299_400n * 10n ** 6n,
        locked: 0n,
      });
      expect(await balance(target, otherId, 'btc')).toEqual({ available: 23n * 10n ** 9n, locked: 0n });
      expect((await balance(target, feesId, 'btc')).available).toBe(feesBefore.btc.available + 2_000_000n);
      expect((await balance(target, feesId, 'uah')).available).toBe(
        feesBefore.uah.available + 600n * 10n ** 6n,
      );
      const wallets = await demo.v3('/v3/auth/r/wallets');
      expect(wallets.json()).toContainEqual(['exchange', 'UAH', 1_000_000 - 300_000, null, 250_000]);

      // The v3 active list shows the rest of the buy; cancel it and its lock returns.
      const active = await demo.v3('/v3/auth/r/orders/btcuah');
      expect(active.json()).toEqual([
        [
          buyOrder.id,
          null,
          null,
          'btcuah',
          expect.any(Number),
          expect.any(Number),
          '0.3',
          '0.5',
          'LIMIT',
          null,
          null,
          null,
          null,
          'ACTIVE',
          null,
          null,
          '1500000',
          '1500000',
        ],
      ]);
      const cancelled = await demo.v3('/v3/order/cancel', { order_id: buyOrder.id });
      expect(cancelled.statusCode).toBe(200);
      expect(cancelled.json()).toMatchObject({
        id: buyOrder.id,
        side: 'buy',
        type: 'limit',
        price: '1500000',
        symbol: 'btcuah',
        original_amount: '0.5',
        remaining_amount: '0.3',
        executed_amount: '0.2',
        is_cancelled: null,
        exchange: null,
      });
      expect(await balance(target, demoId, 'uah')).toEqual({
        available: demoUah.available - 300_000n * 10n ** 6n,
        locked: demoUah.locked,
      });
      const again = await demo.v3('/v3/order/cancel', { order_id: buyOrder.id });
      expect([again.statusCode, again.json().error.code, again.json().error.name]).toEqual([
        400,
        2003,
        'cancel_failed',
      ]);
      const hist = await demo.v3('/v3/auth/r/orders/hist', {});
      expect(hist.json()[0].slice(0, 4)).toEqual([buyOrder.id, null, null, 'btcuah']);
      expect(hist.json()[0][13]).toBe('CANCELED');
      const otherHist = await other.v3('/v3/auth/r/orders/btcuah/hist', { limit: 5, sort: 1 });
      expect(otherHist.json().map((o: unknown[]) => [o[0], o[7], o[13]])).toEqual([
        [sell.json().id, '-0.2', 'EXECUTED'],
      ]);
      expect((await reconcile(target.db())).problems).toEqual([]);
    });

    it('records the nonce of an order in its own transaction: replays, races and refused bodies cannot reuse it', async () => {
      const path = '/v3/auth/w/order/submit';
      const send = (body: string, nonce: string) =>
        app.inject({
          method: 'POST',
          url: path,
          payload: body,
          headers: v3Headers(otherKey.apiKey, otherKey.secret, path, body, nonce),
        });
      const count = async () =>
        (
          await target
            .db()
            .query<{ n: number }>('SELECT count(*)::int AS n FROM orders WHERE account_id = $1', [otherId])
        ).rows[0]!.n;
      const before = await count();
      const body = JSON.stringify({ symbol: 'btcuah', type: 'limit', amount: '0.001', price: '10' });
      const nonce = nextNonce();
      expect((await send(body, nonce)).statusCode).toBe(200);
      const replay = await send(body, nonce);
      expect([replay.statusCode, replay.json().error.name]).toEqual([401, 'nonce_reused']);
      const raceNonce = nextNonce();
      const race = await Promise.all([send(body, raceNonce), send(body, raceNonce)]);
      expect(race.map((r) => r.statusCode).sort()).toEqual([200, 401]);
      expect(await count()).toBe(before + 2);
      // A signed request refused for its body has still used its nonce.
      const badNonce = nextNonce();
      const bad = await send(JSON.stringify({ symbol: 'btcuah', type: 'nope', amount: 1 }), badNonce);
      expect(bad.statusCode).toBe(400);
      expect((await send(body, badNonce)).json().error.name).toBe('nonce_reused');
      const refusedNonce = nextNonce();
      const poor = await send(
        JSON.stringify({ symbol: 'btcuah', type: 'limit', amount: '-1000', price: '1' }),
        refusedNonce,
      );
      expect(poor.json().error.name).toBe('insufficient_funds');
      expect((await send(body, refusedNonce)).json().error.name).toBe('nonce_reused');
      expect(await count()).toBe(before + 2);
      // Cancel what this test placed, so later tests see the book they expect.
      for (const order of (await other.v3('/v3/auth/r/orders/btcuah')).json())
        await other.v3('/v3/order/cancel', { order_id: order[0] });
    });

    it('cancels (v3 and v2) cannot reuse a nonce: races, replays, refused cancels and unknown orders', async () => {
      const place = async () =>
        (
          await other.v3('/v3/auth/w/order/submit', {
            symbol: 'btcuah',
            type: 'limit',
            amount: '0.001',
            price: '10',
          })
        ).json()[0] as number;
      const v3Path = '/v3/order/cancel';
      const v3Cancel = (id: number, nonce: string) => {
        const body = JSON.stringify({ order_id: id });
        return app.inject({
          method: 'POST',
          url: v3Path,
          payload: body,
          headers: v3Headers(otherKey.apiKey, otherKey.secret, v3Path, body, nonce),
        });
      };
      const v2Path = '/api/v2/order/delete';
      const v2Cancel = (id: number, tonce: string) => {
        const params = { access_key: otherKey.apiKey, id: String(id), tonce };
        const signature = clientSignV2(otherKey.secret, 'POST', v2Path, params);
        return app.inject({
          method: 'POST',
          url: v2Path,
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          payload: new URLSearchParams({ ...params, signature }).toString(),
        });
      };
      const state = async (id: number) =>
        (await target.db().query<{ state: string }>('SELECT state FROM orders WHERE id = $1', [id])).rows[0]
          ?.state;
      for (const cancel of [v3Cancel, v2Cancel]) {
        const first = await place();
        const nonce = nextNonce();
        // Two cancels racing with one nonce: one is answered, the other refused as a reused nonce.
        const race = await Promise.all([cancel(first, nonce), cancel(first, nonce)]);
        expect(race.map((r) => r.statusCode).sort()).toEqual([200, 401]);
        expect(race.find((r) => r.statusCode === 401)!.json().error.name).toBe('nonce_reused');
        expect(await state(first)).toBe('cancel');
        const second = await place();
        expect((await cancel(second, nonce)).json().error.name).toBe('nonce_reused');
        expect(await state(second)).toBe('wait');
        // Refused by the engine (cancelled already): its batch has still recorded the nonce.
        const refusedNonce = nextNonce();
        expect((await cancel(first, refusedNonce)).json().error.name).toBe('cancel_failed');
        expect((await cancel(second, refusedNonce)).json().error.name).toBe('nonce_reused');
        // Refused before any batch (no such order): recorded on the way out.
        const unknownNonce = nextNonce();
        expect((await cancel(987_654_321, unknownNonce)).statusCode).toBe(404);
        expect((await cancel(second, unknownNonce)).json().error.name).toBe('nonce_reused');
        expect(await state(second)).toBe('wait');
        expect((await cancel(second, nextNonce())).statusCode).toBe(200);
        expect(await state(second)).toBe('cancel');
      }
      expect((await reconcile(target.db())).problems).toEqual([]);
    });

    it("cannot cancel another account's order (v3 and v2): answered as an unknown order, the order untouched", async () => {
      const placed = await demo.v3('/v3/auth/w/order/submit', {
        symbol: 'btcuah',
        type: 'limit',
        amount: '0.001',
        price: '11',
      });
      expect(placed.statusCode).toBe(200);
      const id = placed.json()[0] as number;
      const locked = await balance(target, demoId, 'uah');
      const state = async () =>
        (await target.db().query<{ state: string }>('SELECT state FROM orders WHERE id = $1', [id])).rows[0]
          ?.state;
      const unknownV3 = await other.v3('/v3/order/cancel', { order_id: 987_654_321 });
      const foreignV3 = await other.v3('/v3/order/cancel', { order_id: id });
      // The same answer as for an order that does not exist: nothing tells the order is someone's.
      expect(foreignV3.statusCode).toBe(404);
      expect(foreignV3.json().error.name).toBe(unknownV3.json().error.name);
      const unknownV2 = await other.v2Post('/api/v2/order/delete', { id: '987654321' });
      const foreignV2 = await other.v2Post('/api/v2/order/delete', { id: String(id) });
      expect(foreignV2.statusCode).toBe(unknownV2.statusCode);
      expect(foreignV2.statusCode).toBeGreaterThanOrEqual(400);
      expect(foreignV2.json().error?.code).toBe(unknownV2.json().error?.code);
      expect(await state()).toBe('wait');
      expect(await balance(target, demoId, 'uah')).toEqual(locked);
      // Its owner can.
      expect((await demo.v3('/v3/order/cancel', { order_id: id })).statusCode).toBe(200);
      expect(await state()).toBe('cancel');
    });

    it('refuses an order beyond the available funds and writes nothing', async () => {
      const before = await balance(target, otherId, 'btc');
      const count = await target.db().query<{ n: number }>('SELECT count(*)::int AS n FROM orders');
      const response = await other.v3('/v3/auth/w/order/submit', {
        symbol: 'btcuah',
        type: 'limit',
        amount: '-1000',
        price: '1000000',
      });
      expect([response.statusCode, response.json().error.code, response.json().error.name]).toEqual([
        400,
        2002,
        'insufficient_funds',
      ]);
      expect(await balance(target, otherId, 'btc')).toEqual(before);
      const after = await target.db().query<{ n: number }>('SELECT count(*)::int AS n FROM orders');
      expect(after.rows[0]!.n).toBe(count.rows[0]!.n);
    });

    it('checks price and amount precision and order sizes with clear errors', async () => {
      const decimals = await demo.v2Post('/api/v2/orders', {
        market: 'btcuah',
        side: 'buy',
        volume: '0.0000001',
        price: '100',
      });
      expect([decimals.statusCode, decimals.json().error.name]).toEqual([400, 'too_many_decimals']);
      const price = await demo.v3('/v3/auth/w/order/submit', {
        symbol: 'btcusdt',
        type: 'limit',
        amount: 0.1,
        price: '1.001',
      });
      expect([price.statusCode, price.json().error.name]).toEqual([400, 'too_many_decimals']);
      const zero = await demo.v3('/v3/auth/w/order/submit', {
        symbol: 'btcuah',
        type: 'limit',
        amount: 0,
        price: 100,
      });
      expect([zero.statusCode, zero.json().error.code]).toEqual([400, 2002]);
      expect(zero.json().error.message).toMatch(/INVALID_AMOUNT/);
      const market = await demo.v3('/v3/auth/w/order/submit', {
        symbol: 'nosuch',
        type: 'limit',
        amount: 1,
        price: 1,
      });
      expect([market.statusCode, market.json().error.name]).toEqual([404, 'unknown_market']);
      const noPrice = await demo.v2Post('/api/v2/orders', { market: 'btcuah', side: 'buy', volume: '1' });
      expect([noPrice.statusCode, noPrice.json().error.name]).toEqual([400, 'validation_failed']);
    });

    it('v3 submit answers with the 18-item order; market orders by base and by quote fill against the book', async () => {
      const ask = await other.v3('/v3/auth/w/order/submit', {
        symbol: 'btcuah',
        type: 'limit',
        amount: '-0.1',
        price: '1600000',
      });
      expect(ask.statusCode).toBe(200);
      const row = ask.json();
      expect(row).toHaveLength(18);
      expect([row[3], row[6], row[7], row[8], row[13], row[16]]).toEqual([
        'btcuah',
        '0.1',
        '-0.1',
        'LIMIT',
        'ACTIVE',
        '1600000',
      ]);
      const byBase = await demo.v3('/v3/auth/w/order/submit', {
        symbol: 'btcuah',
        type: 'market',
        amount: '0.04',
      });
      expect([byBase.json()[6], byBase.json()[8], byBase.json()[13], byBase.json()[17]]).toEqual([
        '0',
        'MARKET',
        'EXECUTED',
        '1600000',
      ]);
      const byQuote = await demo.v3('/v3/auth/w/order/submit', {
        symbol: 'btcuah',
        type: 'market_by_quote',
        amount: '16000',
      });
      expect(byQuote.json()[7]).toBe('0.01');
      const own = await demo.v3('/v3/auth/r/orders');
      expect(own.json()).toEqual([]);
      // A stop-limit order waits unseen in the book until the last price reaches its stop.
      const bookBefore = (await app.inject({ method: 'GET', url: '/v3/book/btcuah' })).json();
      const stop = await demo.v3('/v3/auth/w/order/submit', {
        symbol: 'btcuah',
        type: 'limit_stop_loss',
        amount: '-0.01',
        price: '1000000',
        stop_price: '1100000',
      });
      expect([stop.statusCode, stop.json()[13], stop.json()[8]]).toEqual([200, 'ACTIVE', 'LIMIT']);
      expect((await app.inject({ method: 'GET', url: '/v3/book/btcuah' })).json()).toEqual(bookBefore);
      expect((await demo.v3('/v3/order/cancel', { order_id: stop.json()[0] })).statusCode).toBe(200);
      expect((await reconcile(target.db())).problems).toEqual([]);
    });

    it('cancels several orders by array or JSON string, with both spellings; unknown orders are 404', async () => {
      const ids: number[] = [];
      for (const price of ['100', '101', '102']) {
        const placed = await other.v2Post('/api/v2/orders', {
          market: 'btcuah',
          side: 'buy',
          volume: '0.01',
          price,
        });
        ids.push(placed.json().id);
      }
      const listed = await other.v2Get('/api/v2/orders.json', { market: 'btcuah' });
      expect(listed.json().map((o: { id: number }) => o.id)).toEqual(expect.arrayContaining(ids));
      const one = await other.v2Get('/api/v2/order', { id: String(ids[0]) });
      expect(one.json()).toMatchObject({ id: ids[0], state: 'wait' });
      const deleted = await other.v2Post('/api/v2/order/delete', { id: String(ids[0]) });
      expect(deleted.json()).toMatchObject({ id: ids[0], state: 'wait' });
      expect((await other.v2Get('/api/v2/order', { id: String(ids[0]) })).json().state).toBe('cancel');
      const multi = await other.v3('/v3/order/cancel/multi', { order_ids: JSON.stringify([ids[1]]) });
      expect(multi.json().map((o: { id: number }) => o.id)).toEqual([ids[1]]);
      const multy = await other.v3('/v3/order/cancel/multy', { order_ids: [ids[2], 999_999_999] });
      expect(multy.json().map((o: { id: number }) => o.id)).toEqual([ids[2]]);
      const unknown = await other.v3('/v3/order/cancel', { order_id: 999_999_999 });
      expect([unknown.statusCode, unknown.json().error.code]).toEqual([404, 2004]);
      const foreign = await demo.v2Get('/api/v2/order', { id: String(ids[0]) });
      expect(foreign.statusCode).toBe(404);
    });

    it('derives exchange rates from last prices, crossing markets, else the reference', async () => {
      // Self-contained: the two accounts' resting btcuah orders (left by other cases) are cancelled,
      // then this case trades at 1500000 and at 1600000. The 24 h window's first trade is at 1500000
      // whether the earlier cases ran (their first trade was at that price) or not.
      for (const trader of [demo, other]) {
        for (const order of (await trader.v3('/v3/auth/r/orders/btcuah')).json())
          await trader.v3('/v3/order/cancel', { order_id: order[0] });
      }
      for (const price of ['1500000', '1600000']) {
        const ask = await other.v3('/v3/auth/w/order/submit', {
          symbol: 'btcuah',
          type: 'limit',
          amount: '-0.01',
          price,
        });
        const bid = await demo.v3('/v3/auth/w/order/submit', {
          symbol: 'btcuah',
          type: 'limit',
          amount: '0.01',
          price,
        });
        expect([ask.statusCode, bid.statusCode]).toEqual([200, 200]);
      }
      const rates = (await app.inject({ method: 'GET', url: '/v3/exchange-rates/btc' })).json();
      expect(rates.uah).toBe(1_600_000);
      // 24 h change from the first trade of the window (1500000) to the last (1600000).
      const markets = (await app.inject({ method: 'GET', url: '/v3/markets' })).json();
      expect(markets.find((m: { id: string }) => m.id === 'btcuah').price_change).toBe(6.67);
      const [ticker] = (await app.inject({ method: 'GET', url: '/v3/tickers?symbols=BTCUAH' })).json();
      expect(ticker.slice(5, 8)).toEqual([100000, 6.67, 1600000]);
      const eth = (await app.inject({ method: 'GET', url: '/v3/exchange-rates/eth' })).json();
      expect(eth.uah).toBe(reference.rates.find((r) => r.currency === 'eth')!.uah);
    });

    it('a reopened app on the same database answers the same books, depth and active orders', async () => {
      for (const price of ['1000', '1000', '1001']) {
        await demo.v2Post('/api/v2/orders', { market: 'btcuah', side: 'buy', volume: '0.01', price });
        await other.v2Post('/api/v2/orders', { market: 'btcuah', side: 'buy', volume: '0.02', price });
      }
      const read = async () => ({
        books: await Promise.all(
          reference.markets.map(async (m) =>
            (await app.inject({ method: 'GET', url: `/v3/book/${m.id}` })).json(),
          ),
        ),
        depth: (await app.inject({ method: 'GET', url: '/api/v2/depth?market=btcuah' })).json().bids,
        demo: (await demo.v3('/v3/auth/r/orders')).json(),
        other: (await other.v3('/v3/auth/r/orders/btcuah')).json(),
      });
      const before = await read();
      await app.close();
      app = await buildApp({ db: target.db(), reference, secretBox, fees: FEES });
      expect(await read()).toEqual(before);
      // Priority survives too: a sell at 1000 fills the oldest order at the best price (1001) first.
      const sell = await other.v3('/v3/auth/w/order/submit', {
        symbol: 'btcuah',
        type: 'limit',
        amount: '-0.01',
        price: '1001',
      });
      const trades = await other.v3(`/v3/auth/r/order/btcuah:${sell.json()[0]}/trades`);
      expect(trades.json()).toHaveLength(1);
      const bestDemo = before.demo.find((o: unknown[]) => o[16] === '1001');
      expect((await demo.v3(`/v3/auth/r/order/btcuah:${bestDemo[0]}/trades`)).json()).toHaveLength(1);
    });

    it('rebuilds the books from a command log written one command per row, as before batches were logged whole', async () => {
      await demo.v2Post('/api/v2/orders', { market: 'btcuah', side: 'buy', volume: '0.01', price: '990' });
      await other.v2Post('/api/v2/orders', { market: 'btcuah', side: 'sell', volume: '0.01', price: '2990' });
      const books = async () =>
        Promise.all(
          reference.markets.map(async (m) =>
            (await app.inject({ method: 'GET', url: `/v3/book/${m.id}` })).json(),
          ),
        );
      const before = await books();
      await app.close();
      const db = target.db();
      const { rows } = await db.query<{ market: string; seq: string; command: unknown }>(
        'SELECT market, seq::text, command FROM engine_commands',
      );
      expect(rows.some((row) => Array.isArray(row.command) && row.command.length > 0)).toBe(true);
      await db.transaction(async (tx) => {
        await tx.query('DELETE FROM engine_commands');
        for (const row of rows) {
          const commands = Array.isArray(row.command) ? row.command : [row.command];
          for (const [index, command] of commands.entries()) {
            await tx.query('INSERT INTO engine_commands (market, seq, command) VALUES ($1, $2, $3)', [
              row.market,
              Number(row.seq) - commands.length + 1 + index,
              JSON.stringify(command),
            ]);
          }
        }
      });
      app = await buildApp({ db, reference, secretBox, fees: FEES });
      expect(await books()).toEqual(before);
    });
  });
}
