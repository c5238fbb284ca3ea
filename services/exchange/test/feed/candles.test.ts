import { listenOnFreePort, type RunningApp } from '@platform/testkit/app';
import { afterAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { withTrade } from '../../src/candles/candle.js';
import { defaultFeedConfig } from '../../src/config.js';
import type { App } from '../../src/http/typed.js';
import { accountWithKey, credit } from '../support/accounts.js';
import { client } from '../support/client.js';
import { reference, secretBox, usePostgresTarget } from '../support/targets.js';
import { FeedClient } from './ws-client.js';

// Candles (docs/feed.md, Candles; README "Market data"): GET /v3/candles/{market} from the stored
// trades, equal to an aggregation written here from the trades table; the candles channel sends the
// interval's candle as trades move it; a new process on the same database answers the same.
const target = usePostgresTarget();
const MARKET = 'btcusdt';
/** 2026-11-30 00:00:00 UTC, a whole day: every resolution's interval starts there. */
const DAY = 1_795_996_800_000;
let clock = DAY + 30_000;

describe('candles (postgres)', () => {
  const running: RunningApp[] = [];
  const start = async (): Promise<{ app: App; url: string }> => {
    const app = await buildApp({
      db: target.db(),
      reference,
      secretBox,
      now: () => clock,
      // The clients sign with the real clock's nonces, this app runs on the test's clock.
      nonceWindowMs: 10 * 365 * 86_400_000,
      feed: defaultFeedConfig(),
    });
    const listening = await listenOnFreePort(app);
    running.push(listening);
    return { app, url: listening.url };
  };
  afterAll(async () => {
    for (const app of running) await app.close().catch(() => {});
  });

  /** The candles of the stored trades, computed here: [start s, open, high, low, close, volume]. */
  async function oracle(seconds: number): Promise<number[][]> {
    const { rows } = await target
      .db()
      .query<{ id: string; price: string; amount: string; created_at: string }>(
        'SELECT id::text, price::text, amount::text, created_at::text FROM trades WHERE market = $1 ORDER BY trades.id',
        [MARKET],
      );
    const byStart = new Map<
      number,
      { open: number; high: number; low: number; close: number; volume: number }
    >();
    for (const row of rows) {
      const startAt = Math.floor(Number(row.created_at) / 1000 / seconds) * seconds;
      const price = Number(row.price) / 100;
      const amount = Number(row.amount) / 1e6;
      const candle = byStart.get(startAt);
      if (!candle)
        byStart.set(startAt, { open: price, high: price, low: price, close: price, volume: amount });
      else {
        candle.high = Math.max(candle.high, price);
        candle.low = Math.min(candle.low, price);
        candle.close = price;
        candle.volume = Number((candle.volume + amount).toFixed(6));
      }
    }
    return [...byStart.entries()]
      .sort(([a], [b]) => a - b)
      .map(([t, c]) => [t, c.open, c.high, c.low, c.close, c.volume]);
  }

  it('REST equals the trades aggregated by interval; the channel follows the current candle; a new process answers the same', async () => {
    const first = await start();
    const traders: ReturnType<typeof client>[] = [];
    for (let i = 0; i < 2; i += 1) {
      const { account, apiKey, secret } = await accountWithKey(target.db(), ['read', 'trade']);
      await credit(target.db(), account.id, 'btc', 10n * 10n ** 10n);
      await credit(target.db(), account.id, 'usdt', 10_000_000n * 10n ** 8n);
      traders.push(client(() => first.app, apiKey, secret));
    }
    const feed = await FeedClient.open(`${first.url.replace('http', 'ws')}/v3/ws`);
    expect(
      (await feed.request({ op: 'subscribe', id: 1, channel: 'candles', market: MARKET, resolution: '1m' }))
        .event,
    ).toBe('subscribed');
    const order = async (trader: (typeof traders)[number], amount: string, price: string) => {
      const response = await trader.v3('/v3/auth/w/order/submit', {
        symbol: MARKET,
        type: 'limit',
        amount,
        price,
      });
      expect(response.statusCode, response.body).toBe(200);
    };
    // Trades over 5 hours: a few per minute in some minutes, none in others, prices moving.
    const steps = [0, 5_000, 20_000, 70_000, 75_000, 200_000, 3_600_000, 3_610_000, 7_300_000, 18_000_000];
    let candleFrames = 0;
    for (const [i, step] of steps.entries()) {
      clock = DAY + 30_000 + step;
      const price = (37_000 + ((i * 7) % 11) - 5).toFixed(2);
      await order(traders[0]!, '-0.01', price);
      await order(traders[1]!, '0.004', price);
      await order(traders[1]!, '0.003', price);
      // The candle of this minute after this trade: what the channel sends.
      const minute = (await oracle(60)).at(-1)!;
      const frame = await feed.next(
        (f) => f.event === 'candle' && JSON.stringify(f.candle) === JSON.stringify(minute),
        0,
        10_000,
      );
      expect(frame).toMatchObject({ channel: 'candles', market: MARKET, resolution: '1m' });
      candleFrames += 1;
    }
    expect(candleFrames).toBe(steps.length);
    clock = DAY + 20_000_000;
    const get = (app: App, query: string) =>
      app.inject({ method: 'GET', url: `/v3/candles/${MARKET}?${query}` });
    for (const [resolution, seconds] of [
      ['1m', 60],
      ['5m', 300],
      ['15m', 900],
      ['1h', 3_600],
      ['4h', 14_400],
      ['1d', 86_400],
    ] as const) {
      const response = await get(first.app, `resolution=${resolution}`);
      expect(response.statusCode).toBe(200);
      expect(response.json(), resolution).toEqual(await oracle(seconds));
    }
    // from and to: intervals starting within them (from rounded up, to down); oldest first.
    const minutes = await oracle(60);
    const from = DAY / 1000 + 60;
    const to = DAY / 1000 + 3_610;
    expect((await get(first.app, `resolution=1m&from=${from - 30}&to=${to}`)).json()).toEqual(
      minutes.filter(([t]) => t! >= from && t! <= to),
    );
    // A subscriber joining mid-interval gets the current candle as stored.
    clock = DAY + 30_000 + 18_000_000 + 1_000;
    const late = await FeedClient.open(`${first.url.replace('http', 'ws')}/v3/ws`);
    await late.request({ op: 'subscribe', id: 1, channel: 'candles', market: MARKET, resolution: '1h' });
    expect((await late.next((f) => f.event === 'candle')).candle).toEqual((await oracle(3_600)).at(-1));
    // Bad queries: the documented error.
    for (const query of [
      '',
      'resolution=2m',
      'resolution=1m&from=-1',
      'resolution=1m&from=20&to=10',
      'resolution=1m&to=1e19',
    ])
      expect((await get(first.app, query)).statusCode, query).toBe(400);
    expect(
      (await first.app.inject({ method: 'GET', url: '/v3/candles/dogeusdt?resolution=1m' })).statusCode,
    ).toBe(404);
    const before = (await get(first.app, 'resolution=15m')).body;
    feed.close();
    late.close();
    await running.pop()!.close();

    // A restarted process: the same candles, from the same stored trades.
    const second = await start();
    expect((await get(second.app, 'resolution=15m')).body).toBe(before);
  }, 60_000);

  it('a candle takes trades in its interval, opens a new one for a later one, ignores an earlier or repeated one (pure)', () => {
    const trade = (id: number, price: bigint, at: number) => ({ id, price, amount: 10n, createdAt: at });
    let candle = withTrade('1m', undefined, trade(1, 100n, 60_500));
    candle = withTrade('1m', candle, trade(2, 120n, 61_000));
    candle = withTrade('1m', candle, trade(3, 90n, 119_999));
    expect(candle).toEqual({
      time: 60,
      open: 100n,
      high: 120n,
      low: 90n,
      close: 90n,
      volume: 30n,
      lastTradeId: 3,
    });
    expect(withTrade('1m', candle, trade(3, 1n, 100_000))).toBe(candle);
    expect(withTrade('1m', candle, trade(4, 1n, 59_999))).toBe(candle);
    expect(withTrade('1m', candle, trade(5, 80n, 120_000))).toMatchObject({
      time: 120,
      open: 80n,
      volume: 10n,
    });
  });
});
