import { seedName, testSeeds } from '@platform/testkit/seeds';
import { describe, expect, it } from 'vitest';
import { BookFollower, type BookFrame } from '../../src/feed/book-follower.js';
import { usePostgresTarget } from '../support/targets.js';
import { type Trader, useFeedApp } from './setup.js';
import type { FeedClient, Frame } from './ws-client.js';

const target = usePostgresTarget();
const feed = useFeedApp(target, { tickerIntervalMs: 50 });

/** A small seeded generator, so a failing run can be repeated (the seed is in the test name). */
function random(seed: number) {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Follows the book channel of one client: `sync` applies the book frames received since the last call. */
function follow(client: FeedClient): {
  follower: BookFollower;
  outcomes: string[];
  sync: () => BookFollower;
} {
  const follower = new BookFollower();
  const outcomes: string[] = [];
  let seen = 0;
  const take = () => {
    for (; seen < client.frames.length; seen += 1) {
      const frame = client.frames[seen]!;
      if (frame.channel === 'book' && (frame.event === 'snapshot' || frame.event === 'diff'))
        outcomes.push(follower.apply(frame as unknown as BookFrame));
    }
  };
  return {
    follower,
    outcomes,
    sync: () => {
      take();
      return follower;
    },
  };
}

/**
 * A client that loses one diff (as if a frame went missing): its follower detects the gap and the
 * client subscribes again, which brings a fresh snapshot.
 */
function lossy(client: FeedClient, lose: number) {
  const follower = new BookFollower();
  const outcomes: string[] = [];
  let seen = 0;
  let diffs = 0;
  return {
    outcomes,
    sync: () => {
      for (; seen < client.frames.length; seen += 1) {
        const frame = client.frames[seen]!;
        if (frame.channel !== 'book' || (frame.event !== 'snapshot' && frame.event !== 'diff')) continue;
        if (frame.event === 'diff' && ++diffs === lose) continue;
        const outcome = follower.apply(frame as unknown as BookFrame);
        outcomes.push(outcome);
        if (outcome === 'gap') client.send({ op: 'subscribe', channel: 'book', market: 'btcusdt' });
      }
      return follower;
    },
  };
}

async function restBook(): Promise<unknown> {
  const response = await feed.app().inject({ method: 'GET', url: '/v3/book/btcusdt' });
  expect(response.statusCode).toBe(200);
  return response.json();
}

describe('live feed: public channels follow the committed books (postgres)', () => {
  for (const seed of testSeeds([11]))
    it(`a client following the diffs ends with exactly the REST book after random crossing orders from several accounts; one that loses a diff detects the gap and resyncs (${seedName(seed)})`, async () => {
      const next = random(seed);
      // Trades of an earlier case (another seed) stay in the database: this case counts its own.
      const before = await target
        .db()
        .query<{ id: string }>(
          "SELECT coalesce(max(id), 0)::text AS id FROM trades WHERE market = 'btcusdt'",
        );
      const traders: Trader[] = [];
      for (let i = 0; i < 4; i += 1) traders.push(await feed.trader());
      const early = await feed.connect();
      const { follower, outcomes, sync } = follow(early);
      expect(
        (await early.request({ op: 'subscribe', channel: 'book', market: 'btcusdt', id: 1 })).event,
      ).toBe('subscribed');
      await early.request({ op: 'subscribe', channel: 'trades', market: 'btcusdt', id: 2 });
      const losing = await feed.connect();
      const resyncing = lossy(losing, 3);
      await losing.request({ op: 'subscribe', channel: 'book', market: 'btcusdt', id: 1 });
      // The lossy client reacts to its frames as they come (the others are read at the end).
      losing.socket.on('message', () => setImmediate(resyncing.sync));
      let late: { client: FeedClient; sync: () => BookFollower } | undefined;
      const placed: { trader: Trader; id: number }[] = [];
      for (let wave = 0; wave < 16; wave += 1) {
        // Each trader sends its requests one after another (its nonces must arrive in order); the
        // traders run at once, so the writer batches orders of several accounts together.
        const plans = traders.map((trader) => Array.from({ length: 3 }, () => ({ trader, roll: next() })));
        const requests = plans.map(async (plan) => {
          for (const { trader, roll } of plan) {
            const mine = placed.filter((p) => p.trader === trader);
            if (mine.length > 0 && roll < 0.2) {
              const victim = mine[Math.floor(next() * mine.length)]!;
              placed.splice(placed.indexOf(victim), 1);
              const cancelled = await trader.http.v3('/v3/order/cancel', { order_id: victim.id });
              expect([200, 400]).toContain(cancelled.statusCode);
              continue;
            }
            // Prices in cents around 37,000 (grouped by 10 cents on the wire), buys and sells crossing.
            const price = (3_699_000 + Math.floor(next() * 2_000)) / 100;
            const amount = (1 + Math.floor(next() * 50)) / 1000;
            const sell = next() < 0.5;
            const response = await trader.http.v3('/v3/auth/w/order/submit', {
              symbol: 'btcusdt',
              type: 'limit',
              amount: String(sell ? -amount : amount),
              price: String(price),
            });
            expect(response.statusCode, response.body).toBe(200);
            placed.push({ trader, id: (response.json() as number[])[0]! });
          }
        });
        await Promise.all(requests);
        // A second client joins half-way: its snapshot and the diffs after it must agree too.
        if (wave === 7) {
          const client = await feed.connect();
          late = { client, sync: follow(client).sync };
          await client.request({ op: 'subscribe', channel: 'book', market: 'btcusdt', id: 1 });
        }
      }
      const rest = await restBook();
      expect((rest as unknown[]).length).toBeGreaterThan(3);
      const matches = (f: BookFollower) => JSON.stringify(f.restBook()) === JSON.stringify(rest);
      await early.until(() => (matches(sync()) ? true : undefined), 10_000, 'book equal to REST');
      expect(follower.restBook()).toEqual(rest);
      expect(outcomes.every((o) => o === 'applied' || o === 'stale')).toBe(true);
      expect(outcomes).not.toContain('gap');
      await late!.client.until(() => (matches(late!.sync()) ? true : undefined), 10_000, 'late book');
      expect(late!.sync().restBook()).toEqual(rest);
      await losing.until(() => (matches(resyncing.sync()) ? true : undefined), 10_000, 'resynced book');
      expect(resyncing.outcomes).toContain('gap');
      expect(resyncing.sync().restBook()).toEqual(rest);
      losing.close();

      // Every trade of the market since the case began arrived once, in id order.
      const { rows } = await target
        .db()
        .query<{ id: string }>(
          "SELECT id::text FROM trades WHERE market = 'btcusdt' AND id > $1 ORDER BY trades.id",
          [before.rows[0]!.id],
        );
      expect(rows.length).toBeGreaterThan(0);
      const tradeIds = () =>
        early.frames
          .filter((f) => f.event === 'trades')
          .flatMap((f) => (f.trades as { id: number }[]).map((t) => String(t.id)));
      await early.until(() => (tradeIds().length >= rows.length ? true : undefined), 10_000, 'all trades');
      expect(tradeIds()).toEqual(rows.map((r) => r.id));
      early.close();
      late!.client.close();
    });

  it('ticker: the REST ticker on subscribe, then a new one after a trade; a book nobody followed snapshots as REST', async () => {
    const [maker, taker] = [await feed.trader(), await feed.trader()];
    const client = await feed.connect();
    await client.request({ op: 'subscribe', channel: 'ticker', market: 'ethusdt', id: 1 });
    const first = await client.next((f) => f.event === 'ticker');
    const rest = await feed.app().inject({ method: 'GET', url: '/v3/tickers?symbols=ethusdt' });
    expect(first.ticker).toEqual((rest.json() as unknown[])[0]);
    const from = client.frames.length;
    // The only orders of ethusdt in this file: they trade at 2000.5.
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
    // The maker's order alone may have sent a ticker (its ask) first.
    const ticker: Frame = await client.next(
      (f) => f.event === 'ticker' && (f.ticker as number[])[7] !== 0,
      from,
    );
    expect(ticker.ticker).toEqual(['ethusdt', 0, 0, 0, 0, 0, 0, 2000.5, 0.01, 2000.5, 2000.5]);
    const after = await feed.app().inject({ method: 'GET', url: '/v3/tickers?symbols=ethusdt' });
    expect(ticker.ticker).toEqual((after.json() as unknown[])[0]);

    // Nobody followed this book so far (the feed kept only the view): a first snapshot is the REST book.
    const resting = await taker.http.v3('/v3/auth/w/order/submit', {
      symbol: 'ethusdt',
      type: 'limit',
      amount: '0.02',
      price: '1999.37',
    });
    expect(resting.statusCode, resting.body).toBe(200);
    await client.request({ op: 'subscribe', channel: 'book', market: 'ethusdt', id: 2 });
    const { sync } = follow(client);
    await client.until(() => (sync().lastSeq !== undefined ? true : undefined), 10_000, 'snapshot');
    const book = await feed.app().inject({ method: 'GET', url: '/v3/book/ethusdt' });
    expect(sync().restBook()).toEqual(book.json());
    expect(sync().restBook()).toEqual([[1999.3, 0.02, 1]]);
    client.close();
  });
});
