import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import type { App } from '../../src/http/typed.js';
import { changePercent, v2Ticker, v3Ticker } from '../../src/orders/market-data.js';
import { tradingMarkets } from '../../src/orders/markets.js';
import { accountWithKey, credit } from '../support/accounts.js';
import { type Client, client } from '../support/client.js';
import { seededRandom } from '../support/random.js';
import { reference, secretBox, usePostgresTarget } from '../support/targets.js';
import { storedSummaries } from './sql-oracle.js';

const HOUR = 3_600_000;
const MARKETS = ['btcuah', 'ethuah'];
const markets = [...tradingMarkets(reference, { makerFeePpm: 1_000, takerFeePpm: 2_000 }).values()];

describe('market data from memory equals the SQL aggregation (postgres)', () => {
  const target = usePostgresTarget();
  let clock = Date.now();
  const now = () => clock;
  let app: App;
  const traders: Client[] = [];
  const open = () => buildApp({ db: target.db(), reference, secretBox, now, nonceWindowMs: 30 * 24 * HOUR });

  beforeAll(async () => {
    app = await open();
    for (let i = 0; i < 2; i += 1) {
      const { account, apiKey, secret } = await accountWithKey(target.db(), ['read', 'trade']);
      for (const currency of ['uah', 'btc', 'eth']) {
        await credit(target.db(), account.id, currency, 10n ** 15n);
      }
      traders.push(client(() => app, apiKey, secret));
    }
  });
  afterAll(async () => {
    await app?.close();
  });

  /** The public market data routes answer exactly the bytes the stored rows give. */
  async function expectSameAsSql(): Promise<void> {
    const expected = await storedSummaries(target.db(), markets, clock);
    const get = async (url: string) => (await app.inject({ method: 'GET', url })).body;
    expect(await get('/v3/tickers?symbols=ALL')).toBe(JSON.stringify(expected.map(v3Ticker)));
    expect(await get('/v3/tickers?symbols=ethuah,btcuah')).toBe(
      JSON.stringify([expected[1]!, expected[0]!].map(v3Ticker)),
    );
    expect(await get('/api/v2/tickers')).toBe(
      JSON.stringify(Object.fromEntries(expected.map((s) => [s.market.id, v2Ticker(s, clock)]))),
    );
    expect(await get('/api/v2/tickers/ethuah.json')).toBe(JSON.stringify(v2Ticker(expected[1]!, clock)));
    const changes = JSON.parse(await get('/v3/markets')).map((m: { price_change: number }) => m.price_change);
    expect(changes).toEqual(expected.map((s) => changePercent(s.day)));
  }

  it('after random trades and clock moves, and after a restart that restores the window', async () => {
    const random = seededRandom(7);
    for (let step = 0; step < 60; step += 1) {
      const market = MARKETS[random(2)]!;
      const side = random(2) === 0 ? 'buy' : 'sell';
      // Prices in a narrow band so that orders cross often; several orders per clock position.
      const placed = await traders[random(2)]!.v2Post('/api/v2/orders', {
        market,
        side,
        volume: `0.0${1 + random(9)}`,
        price: String(100 + random(12)),
      });
      expect(placed.statusCode).toBe(201);
      const move = random(10);
      // Mostly minutes, sometimes hours, once in a while past the whole window.
      clock += move < 6 ? random(60_000) : move < 9 ? random(8 * HOUR) : 25 * HOUR;
      await expectSameAsSql();
    }
    const { rows } = await target.db().query<{ n: number }>('SELECT count(*)::int AS n FROM trades');
    expect(rows[0]!.n).toBeGreaterThan(10);

    // Trades 12 h apart, then a restart: the window comes back from the stored trades, and the
    // older ones still expire on time afterwards.
    const cross = async (price: string) => {
      for (const [index, side] of ['buy', 'sell'].entries()) {
        const placed = await traders[index]!.v2Post('/api/v2/orders', {
          market: 'btcuah',
          side,
          volume: '0.05',
          price,
        });
        expect(placed.statusCode).toBe(201);
      }
    };
    clock += 25 * HOUR;
    await cross('300');
    clock += 12 * HOUR;
    await cross('200');
    await expectSameAsSql();
    await app.close();
    clock += HOUR;
    app = await open();
    await expectSameAsSql();
    clock += 12 * HOUR;
    await expectSameAsSql();
  });
});
