import { describe, expect, it } from 'vitest';
import { DAY_MS } from '../../src/orders/market-data.js';
import { usePostgresTarget } from '../support/targets.js';
import { useFeedApp } from './setup.js';

const target = usePostgresTarget();
/** The server's clock: real time plus a shift the test moves (to let trades age out of the window). */
let shift = 0;
const feed = useFeedApp(target, { tickerIntervalMs: 50 }, () => Date.now() + shift);

describe('live feed: the ticker when trades leave the 24 h window (postgres)', () => {
  it('a quiet market’s ticker is sent again once its trades are older than 24 h', async () => {
    const [maker, taker] = [await feed.trader(), await feed.trader()];
    // Subscribed first, so the batches' own ticker comes before the clock moves.
    const client = await feed.connect();
    await client.request({ op: 'subscribe', channel: 'ticker', market: 'ethusdt', id: 1 });
    for (const [trader, amount] of [
      [maker, '-0.01'],
      [taker, '0.01'],
    ] as const) {
      const response = await trader.http.v3('/v3/auth/w/order/submit', {
        symbol: 'ethusdt',
        type: 'limit',
        amount,
        price: '2000.5',
      });
      expect(response.statusCode, response.body).toBe(200);
    }
    // The trade's ticker: volume 0.01, high and low 2000.5 within the window.
    const traded = await client.next((f) => f.event === 'ticker' && (f.ticker as number[])[8] === 0.01);
    expect((traded.ticker as number[]).slice(7)).toEqual([2000.5, 0.01, 2000.5, 2000.5]);
    const from = client.frames.length;
    shift = DAY_MS + 1_000;
    // No batch: only the window moved. Woken by the frame, within the test's deadline.
    const aged = await client.next((f) => f.event === 'ticker', from);
    const rest = await feed.app().inject({ method: 'GET', url: '/v3/tickers?symbols=ethusdt' });
    expect(aged.ticker).toEqual((rest.json() as unknown[])[0]);
    expect((aged.ticker as number[])[8]).toBe(0);
    client.close();
    await client.whenClosed();
  });
});
