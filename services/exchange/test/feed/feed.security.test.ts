import { describe, expect, it } from 'vitest';
import { balancesOf } from '../../src/ledger/store.js';
import { formatAmount } from '../../src/money/decimal.js';
import { accountWithKey } from '../support/accounts.js';
import { clientSignV3, nextNonce } from '../support/signing.js';
import { reference, usePostgresTarget } from '../support/targets.js';
import { type Trader, useFeedApp } from './setup.js';
import type { FeedClient, Frame } from './ws-client.js';

const target = usePostgresTarget();
const feed = useFeedApp(target);

/** The auth frame of the documented scheme, written from docs/feed.md: HMAC-SHA384 over "/v3/ws" + nonce + "{}". */
function authFrame(key: { apiKey: string; secret: string }, nonce = nextNonce(), id = 1) {
  return {
    op: 'auth',
    id,
    key: key.apiKey,
    nonce,
    signature: clientSignV3(key.secret, '/v3/ws', nonce, '{}'),
  };
}

async function privateClient(trader: Trader): Promise<FeedClient> {
  const client = await feed.connect();
  expect((await client.request(authFrame(trader))).event).toBe('authenticated');
  expect((await client.request({ op: 'subscribe', channel: 'orders', id: 2 })).event).toBe('subscribed');
  expect((await client.request({ op: 'subscribe', channel: 'balances', id: 3 })).event).toBe('subscribed');
  return client;
}

const orderIds = (client: FeedClient) =>
  client.frames.filter((f) => f.event === 'orders').flatMap((f) => (f.orders as [number][]).map((o) => o[0]));

describe('live feed: private channels (postgres)', () => {
  it('each account sees its own orders and balances only, as stored', async () => {
    const [seller, buyer] = [await feed.trader(), await feed.trader()];
    const [sellerFeed, buyerFeed] = [await privateClient(seller), await privateClient(buyer)];
    const stranger = await feed.connect();
    // A public client asking for a private channel is refused and hears nothing private.
    const refused = await stranger.request({ op: 'subscribe', channel: 'orders', id: 7 });
    expect(refused).toMatchObject({ event: 'error', code: 3304, name: 'not_authenticated', id: 7 });

    const sell = await seller.http.v3('/v3/auth/w/order/submit', {
      symbol: 'ethbtc',
      type: 'limit',
      amount: '-0.5',
      price: '0.055',
    });
    expect(sell.statusCode, sell.body).toBe(200);
    const buy = await buyer.http.v3('/v3/auth/w/order/submit', {
      symbol: 'ethbtc',
      type: 'limit',
      amount: '0.2',
      price: '0.055',
    });
    expect(buy.statusCode, buy.body).toBe(200);
    const sellId = (sell.json() as number[])[0]!;
    const buyId = (buy.json() as number[])[0]!;

    // The seller hears its order placed, then partly filled (remaining 0.3); the buyer its order done.
    await sellerFeed.next(
      (f) => f.event === 'orders' && (f.orders as unknown[][]).some((o) => o[0] === sellId && o[6] === '0.3'),
    );
    const buyerOrder = await buyerFeed.next((f) => f.event === 'orders');
    expect((buyerOrder.orders as unknown[][])[0]).toMatchObject({ 0: buyId, 3: 'ethbtc', 13: 'EXECUTED' });
    expect(new Set(orderIds(sellerFeed))).toEqual(new Set([sellId]));
    expect(new Set(orderIds(buyerFeed))).toEqual(new Set([buyId]));

    // The last balances frame of each currency is the stored available balance of that account.
    for (const [trader, client] of [
      [seller, sellerFeed],
      [buyer, buyerFeed],
    ] as const) {
      const stored = await balancesOf(target.db(), trader.accountId);
      const expected = (currency: string) =>
        formatAmount(
          stored.find((b) => b.currency === currency)!.available,
          reference.ledgerPrecision(currency),
        );
      const latest = (currency: string) =>
        client.frames
          .filter((f: Frame) => f.event === 'balances')
          .flatMap((f) => f.balances as { currency: string; available: string }[])
          .filter((b) => b.currency === currency)
          .at(-1)?.available;
      await client.until(
        () => (latest('eth') === expected('eth') && latest('btc') === expected('btc') ? true : undefined),
        10_000,
        `balances of ${trader.accountId}`,
      );
    }
    expect(stranger.frames.filter((f) => f.event === 'orders' || f.event === 'balances')).toEqual([]);
    for (const client of [sellerFeed, buyerFeed, stranger]) client.close();
  });

  it('auth refusals: wrong signature, unknown key, replayed nonce, key without read scope, second auth', async () => {
    const trader = await feed.trader();
    const client = await feed.connect();
    const wrong = { ...authFrame(trader), signature: 'ab'.repeat(48) };
    expect(await client.request(wrong)).toMatchObject({ event: 'error', name: 'bad_signature', code: 2005 });
    const unknown = authFrame({ apiKey: 'no-such-key', secret: 'x' }, nextNonce(), 2);
    expect(await client.request(unknown)).toMatchObject({ event: 'error', name: 'unknown_key', code: 2008 });
    const frame = authFrame(trader, nextNonce(), 3);
    expect((await client.request(frame)).event).toBe('authenticated');
    expect(await client.request({ ...frame, id: 4 })).toMatchObject({
      name: 'already_authenticated',
      code: 3305,
    });
    // The same frame captured and sent on another connection: the nonce was used.
    const replay = await feed.connect();
    expect(await replay.request(frame)).toMatchObject({ event: 'error', name: 'nonce_reused', code: 2006 });
    const old = authFrame(trader, String(Date.now() - 3_600_000), 5);
    expect(await replay.request(old)).toMatchObject({ name: 'nonce_out_of_window', code: 2007 });
    const tradeOnly = await accountWithKey(target.db(), ['trade']);
    expect(await replay.request(authFrame(tradeOnly, nextNonce(), 6))).toMatchObject({
      name: 'scope_missing',
      code: 2010,
    });
    expect(await replay.request({ op: 'subscribe', channel: 'balances', id: 8 })).toMatchObject({
      name: 'not_authenticated',
    });
    client.close();
    replay.close();
  });
});
