import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { type CliContext, runCli } from '../../src/cli/commands.js';
import type { App } from '../../src/http/typed.js';
import { reconcile } from '../../src/ledger/reconcile.js';
import { balancesOf } from '../../src/ledger/store.js';
import { DEMO_ACCOUNTS, seedDemo } from '../../src/seed.js';
import { type Client, client } from '../support/client.js';
import { reference, secretBox, type Target } from '../support/targets.js';

async function uah(target: Target, accountId: number) {
  const found = (await balancesOf(target.db(), accountId)).find((b) => b.currency === 'uah');
  return { available: found?.available ?? 0n, locked: found?.locked ?? 0n };
}

/**
 * Time in force, post-only, self-trade prevention and amend through signed v3 calls (issue 43),
 * over PostgreSQL and PGlite: the answers, the book, the locks and a clean reconcile.
 */
export function orderEntryContract(target: Target): void {
  describe(`order entry options (${target.name})`, () => {
    let app: App;
    let demo: Client;
    let demoId: number;
    let other: Client;
    let demoKey: string;
    const submit = (who: Client, body: Record<string, unknown>) =>
      who.v3('/v3/auth/w/order/submit', { symbol: 'btcuah', type: 'limit', ...body });
    const book = async () => (await app.inject({ method: 'GET', url: '/v3/book/btcuah' })).json();

    beforeAll(async () => {
      app = await buildApp({ db: target.db(), reference, secretBox });
      const dir = mkdtempSync(path.join(tmpdir(), 'exchange-i43-'));
      const seeded = await seedDemo(target.db(), secretBox, reference, dir);
      demo = client(() => app, seeded.apiKey, seeded.apiSecret);
      demoId = seeded.accountId;
      demoKey = seeded.apiKey;
      const second = await seedDemo(target.db(), secretBox, reference, dir, DEMO_ACCOUNTS[1]);
      other = client(() => app, second.apiKey, second.apiSecret);
    });
    afterAll(async () => {
      await app?.close();
    });

    it('post-only that would take is 400 post_only_would_take and books nothing; FOK and IOC end at once', async () => {
      const maker = await submit(other, { amount: '-0.1', price: '1000000' });
      expect(maker.statusCode).toBe(200);
      const refused = await submit(demo, { amount: '0.05', price: '1000000', post_only: true });
      expect(refused.statusCode).toBe(400);
      expect(refused.json().error).toMatchObject({ code: 2040, name: 'post_only_would_take' });
      // ccxt's spelling: timeInForce PO is post-only.
      const ccxt = await submit(demo, { amount: '0.05', price: '1000000', timeInForce: 'PO' });
      expect(ccxt.json().error?.name).toBe('post_only_would_take');
      expect(await book()).toEqual([[1000000, -0.1, 1]]);

      const killed = await submit(demo, { amount: '0.2', price: '1000000', time_in_force: 'fok' });
      expect(killed.statusCode).toBe(200);
      // Done with nothing traded: remaining 0.2 of 0.2, cancelled.
      expect(killed.json()[6]).toBe('0.2');
      expect(killed.json()[13]).toBe('CANCELED');
      const ioc = await submit(demo, { amount: '0.15', price: '1000000', timeInForce: 'IOC' });
      expect(ioc.json()[6]).toBe('0.05');
      expect(ioc.json()[13]).toMatch(/CANCELED/);
      expect(await book()).toEqual([]);
      expect((await uah(target, demoId)).locked).toBe(0n);
      const bad = await submit(demo, { amount: '0.1', price: '1000000', time_in_force: 'day' });
      expect(bad.statusCode).toBe(400);
      // Both spellings, saying different things: refused, nothing placed; the same thing twice is taken.
      const torn = await submit(demo, {
        amount: '0.1',
        price: '1000000',
        time_in_force: 'ioc',
        timeInForce: 'FOK',
      });
      expect([torn.statusCode, torn.json().error?.name]).toEqual([400, 'validation_failed']);
      const tornPost = await submit(demo, {
        amount: '0.1',
        price: '1000000',
        post_only: false,
        postOnly: true,
      });
      expect(tornPost.statusCode).toBe(400);
      expect(await book()).toEqual([]);
      const agreed = await submit(demo, {
        amount: '0.1',
        price: '1000000',
        time_in_force: 'ioc',
        timeInForce: 'IOC',
      });
      expect(agreed.statusCode).toBe(200);
    });

    it('amend: a smaller amount keeps the queue place, a larger one moves it back; the lock follows', async () => {
      const first = (await submit(demo, { amount: '0.3', price: '900000' })).json()[0] as number;
      const second = (await submit(other, { amount: '0.3', price: '900000' })).json()[0] as number;
      const before = await uah(target, demoId);
      const smaller = await demo.v3('/v3/order/amend', { order_id: first, amount: '0.2' });
      expect(smaller.statusCode).toBe(200);
      expect(smaller.json()[0]).toBe(first);
      expect(smaller.json()[6]).toBe('0.2');
      expect(smaller.json()[7]).toBe('0.2');
      // 0.1 BTC at 900000 UAH released (ledger precision 6).
      expect((await uah(target, demoId)).locked).toBe(before.locked - 90_000n * 10n ** 6n);
      expect(await book()).toEqual([[900000, 0.5, 2]]);
      // A sell of 0.25 fills the first in the queue (still the amended one) whole, then meets the seller's
      // own order (the second) and ends there (expire_taker).
      const sell = await submit(other, { amount: '-0.25', price: '900000', stp: 'expire_taker' });
      expect(sell.statusCode).toBe(200);
      const active = (await demo.v3('/v3/auth/r/orders/btcuah')).json();
      expect(active.map((o: unknown[]) => o[0])).not.toContain(first);

      const third = (await submit(demo, { amount: '0.1', price: '900000' })).json()[0] as number;
      const moved = await demo.v3('/v3/order/amend', { order_id: third, price: '910000' });
      expect(moved.json()[16]).toBe('910000');
      expect(await book()).toEqual([
        [910000, 0.1, 1],
        [900000, 0.3, 1],
      ]);
      const part = (await submit(demo, { amount: '0.1', price: '915000' })).json()[0] as number;
      await submit(other, { amount: '-0.05', price: '915000' });
      const below = await demo.v3('/v3/order/amend', { order_id: part, amount: '0.05' });
      expect(below.statusCode).toBe(400);
      expect(below.json().error).toMatchObject({ code: 2041, name: 'amend_below_filled' });
      const wrongSign = await demo.v3('/v3/order/amend', { order_id: third, amount: '-0.1' });
      expect(wrongSign.statusCode).toBe(400);
      const foreign = await demo.v3('/v3/order/amend', { order_id: second, amount: '0.5' });
      expect(foreign.statusCode).toBe(404);
      expect((await reconcile(target.db())).problems).toEqual([]);
    });

    it('self-trade prevention: expire_taker ends the taker and leaves the own resting order', async () => {
      const resting = (await submit(demo, { amount: '-0.1', price: '2000000' })).json()[0] as number;
      const taker = await submit(demo, { amount: '0.1', price: '2000000', stp: 'expire_taker' });
      expect(taker.json()[13]).toBe('CANCELED');
      const active = (await demo.v3('/v3/auth/r/orders/btcuah')).json();
      expect(active.map((o: unknown[]) => o[0])).toContain(resting);
      const bad = await submit(demo, { amount: '0.1', price: '2000000', stp: 'cancel_newest' });
      expect(bad.statusCode).toBe(400);
      expect((await reconcile(target.db())).problems).toEqual([]);
    });

    it("the API key's stp default applies to orders naming none (here none: the self-trade happens)", async () => {
      await runCli(['key', 'update', demoKey, '--stp', 'none'], cliContext(target));
      // The demo's own sell of the test before (2000000) is the best ask: the buy trades with it.
      const taker = await submit(demo, { amount: '0.01', price: '3000000' });
      expect(taker.json()[13]).toBe('EXECUTED');
      const trades = (await demo.v3(`/v3/auth/r/order/btcuah:${taker.json()[0]}/trades`)).json();
      expect(trades).toHaveLength(1);
      expect(trades[0][5]).toBe('2000000');
      await runCli(['key', 'update', demoKey, '--stp', 'default'], cliContext(target));
      const again = await submit(demo, { amount: '0.01', price: '3000000' });
      // expire_maker again: the own resting order is cancelled, the taker rests.
      expect(again.json()[13]).toBe('ACTIVE');
      const refused = await runCli(
        ['key', 'update', demoKey, '--stp', 'sometimes'],
        cliContext(target),
      ).catch(() => 2);
      expect(refused).not.toBe(0);
      expect((await reconcile(target.db())).problems).toEqual([]);
    });

    it("a self-trade (stp none) is flagged in the v2 trade list (v3 keeps the spec's 11 items); STP and FOK ends keep their reason", async () => {
      // Far above the book of the tests before, so that only the demo's own orders meet here.
      const sell = (await submit(demo, { amount: '-0.02', price: '5000000' })).json()[0] as number;
      const buy = await submit(demo, { amount: '0.01', price: '5000000', stp: 'none' });
      expect(buy.json()[13]).toBe('EXECUTED');
      const buyId = buy.json()[0] as number;
      const v3 = (await demo.v3(`/v3/auth/r/order/btcuah:${buyId}/trades`)).json();
      expect(v3).toHaveLength(1);
      // The spec fixes the v3 trade array at 11 items: the flag is on v2's trade objects and the feed.
      expect(v3[0]).toHaveLength(11);
      const mine = (await demo.v2Get('/api/v2/trades/my', { market: 'btcuah' })).json() as {
        order_id: number;
        self_trade: boolean;
      }[];
      const own = mine.filter((t) => t.order_id === buyId || t.order_id === sell);
      expect(own).toHaveLength(1);
      expect(own[0]!.self_trade).toBe(true);
      // The IOC of the first test traded with the other account's order: not a self-trade.
      expect(mine.some((t) => t.self_trade === false)).toBe(true);
      const ordinary = (await demo.v2Get('/api/v2/order', { id: String(buyId) })).json();
      expect(ordinary).toMatchObject({ state: 'done', reason: null, stp: null });

      // expire_maker: the taker meets the rest of the own sell, which is cancelled with the reason and mode.
      const taker = await submit(demo, { amount: '0.01', price: '5000000', stp: 'expire_maker' });
      expect(taker.json()[13]).toBe('ACTIVE');
      const ended = (await demo.v2Get('/api/v2/order', { id: String(sell) })).json();
      expect(ended).toMatchObject({ state: 'cancel', reason: 'self_trade_prevented', stp: 'expire_maker' });
      expect((await demo.v2Get('/api/v2/order', { id: String(taker.json()[0]) })).json().reason).toBeNull();

      // A FOK that cannot fill (no ask at or below 1000).
      const fok = await submit(demo, { amount: '0.01', price: '1000', time_in_force: 'fok' });
      const killed = (await demo.v2Get('/api/v2/order', { id: String(fok.json()[0]) })).json();
      expect(killed).toMatchObject({ state: 'cancel', reason: 'fok_not_filled', stp: null });
      await demo.v3('/v3/order/cancel', { id: taker.json()[0] });
      expect((await reconcile(target.db())).problems).toEqual([]);
    });
  });
}

function cliContext(target: Target) {
  const context: CliContext = { db: target.db(), reference, secretBox, print: () => {} };
  return context;
}
