import { seedName, testSeeds } from '@platform/testkit/seeds';
import { describe, expect, it } from 'vitest';
import { BookFollower, type BookFrame, L3Follower, type L3Frame } from '../../src/feed/book-follower.js';
import { DEFAULT_FEES, tradingMarkets } from '../../src/orders/markets.js';
import { replayLog } from '../../src/orders/replay.js';
import { rng } from '../matching/random-commands.js';
import { credit } from '../support/accounts.js';
import { reference, usePostgresTarget } from '../support/targets.js';
import { OrderSocket } from './order-socket.js';
import { type Trader, useFeedApp } from './setup.js';
import type { FeedClient, Frame } from './ws-client.js';

// Books a client can verify (docs/feed.md, Checksums): over a seeded run of 10,000 random orders
// and cancels sent over the feed's own order entry, clients follow `book` and `book_l3` and check
// the checksum of every frame; a diff altered on the way is caught by it; at the end the books
// equal GET /v3/book (body and headers) and the engine's queues as the stored log rebuilds them.
const target = usePostgresTarget();
const feed = useFeedApp(target, { messagesPerSecond: 1_000, messageBurst: 1_000 });
const MARKET = 'btcusdt';
const btcusdt = tradingMarkets(reference, DEFAULT_FEES).get(MARKET)!;
// btcusdt: prices in cents (grouped to 10 cents on the `book` channel), amounts in 10^-6 btc.
const PRECISION = { price: 2, amount: 6 };

/** A follower fed with a client's frames of one channel as they come; records every outcome. */
function watch<F extends BookFrame | L3Frame>(
  client: FeedClient,
  channel: 'book' | 'book_l3',
  follower: { apply(frame: F): string },
  alter?: (frame: Frame, index: number) => Frame,
) {
  const outcomes: string[] = [];
  let seen = 0;
  let frames = 0;
  const sync = () => {
    for (; seen < client.frames.length; seen += 1) {
      let frame = client.frames[seen]!;
      if (frame.channel !== channel || (frame.event !== 'snapshot' && frame.event !== 'diff')) continue;
      if (alter) frame = alter(frame, frames);
      frames += 1;
      outcomes.push(follower.apply(frame as unknown as F));
    }
  };
  client.socket.on('message', () => setImmediate(sync));
  return { outcomes, sync };
}

describe('live feed: every book frame carries a checksum a client can verify (postgres)', () => {
  for (const seed of testSeeds([44]))
    it(`10,000 random orders over the feed: every book and book_l3 frame checks out, an altered diff does not, the end equals REST and the engine (${seedName(seed)})`, async () => {
      const traders: Trader[] = [];
      for (let i = 0; i < 4; i += 1) {
        const trader = await feed.trader();
        // Enough that no order of the run is refused for funds.
        await credit(target.db(), trader.accountId, 'btc', 1_000n * 10n ** 10n);
        await credit(target.db(), trader.accountId, 'usdt', 100_000_000n * 10n ** 8n);
        traders.push(trader);
      }
      const sockets = await Promise.all(
        traders.map((t) => OrderSocket.open(feed.wsUrl(), t.apiKey, t.secret)),
      );
      const observer = await feed.connect();
      const book = new BookFollower(PRECISION);
      const l3 = new L3Follower(PRECISION);
      const bookWatch = watch(observer, 'book', book);
      const l3Watch = watch(observer, 'book_l3', l3);
      // A client whose 40th book diff is altered on the way: the volume of its best bid (or best
      // ask) as the client holds it changes by one unit. The checksum covers the best ten levels
      // only, so the altered level must be one of them: altering a level the diff happens to carry
      // first can hit a deep level, caught only frames later, once it rises into the best ten.
      const tampered = await feed.connect();
      const victim = new BookFollower(PRECISION);
      const victimWatch = watch(tampered, 'book', victim, (frame, index) => {
        if (index !== 40 || frame.event !== 'diff') return frame;
        const held = victim.restBook();
        const bestBid = held.find((level) => level[1] > 0);
        const bestAsk = held.find((level) => level[1] < 0);
        const side = bestBid || !bestAsk ? 'bids' : 'asks';
        const [price, volume, orders] = bestBid ?? bestAsk ?? [37_000, 0.5, 1];
        const levels = frame[side] as number[][];
        // The diff's own change of that level, when it has one, is the one altered.
        const own = levels.find((level) => level[0] === price) ?? [price, Math.abs(volume), orders];
        const altered = [price, own[1]! + 0.000001, Math.max(1, own[2]!)];
        return { ...frame, [side]: [...levels.filter((level) => level[0] !== price), altered] };
      });
      for (const client of [observer, tampered])
        for (const [id, channel] of [
          [1, 'book'],
          [2, 'book_l3'],
        ] as const)
          expect((await client.request({ op: 'subscribe', channel, market: MARKET, id })).event).toBe(
            'subscribed',
          );
      // Each trader runs 2,500 orders, 10 at a time: limits around 37,000 crossing both ways, some
      // market orders, and cancels of its own resting orders.
      const resting = traders.map(() => [] as number[]);
      let acknowledged = 0;
      let cancels = 0;
      const run = async (index: number) => {
        const socket = sockets[index]!;
        // Each lane draws from its own seeded generator (the lanes' interleaving is the machine's).
        const lane = async (_: unknown, laneIndex: number) => {
          const random = rng(seed * 100 + index * 10 + laneIndex);
          for (let sent = 0; sent < 250; sent += 1) {
            const roll = random();
            const mine = resting[index]!;
            if (roll < 0.15 && mine.length > 0) {
              const id = mine.splice(Math.floor(random() * mine.length), 1)[0]!;
              const answer = await socket.op('order.cancel', { order_id: id });
              cancels += 1;
              // Filled meanwhile: cancel_failed (2003).
              if (answer.error) expect(answer.error.code).toBe(2003);
              continue;
            }
            const sell = random() < 0.5;
            const market = roll < 0.2;
            const amount = (1 + Math.floor(random() * 40)) / 1000;
            const answer = await socket.op('order.submit', {
              symbol: MARKET,
              type: market ? 'market' : 'limit',
              amount: sell ? -amount : amount,
              ...(market ? {} : { price: (3_699_000 + Math.floor(random() * 2_000)) / 100 }),
            });
            expect(answer.error, JSON.stringify(answer)).toBeUndefined();
            acknowledged += 1;
            const order = answer.result as (string | number | null)[];
            if (order[13] === 'ACTIVE') mine.push(order[0] as number);
          }
        };
        await Promise.all(Array.from({ length: 10 }, (_, i) => lane(_, i)));
      };
      await Promise.all(traders.map((_, i) => run(i)));
      expect(acknowledged).toBeGreaterThan(8_000);
      expect(acknowledged + cancels).toBe(10_000);

      // The end: the followers reach the REST book's sequence number and agree with it.
      const rest = await feed.app().inject({ method: 'GET', url: `/v3/book/${MARKET}` });
      const seq = Number(rest.headers['x-book-seq']);
      await observer.until(
        () => {
          bookWatch.sync();
          l3Watch.sync();
          return book.lastSeq === seq && l3.lastSeq === seq ? true : undefined;
        },
        20_000,
        `both books at seq ${seq}`,
      );
      expect(bookWatch.outcomes.length).toBeGreaterThan(200);
      expect(new Set(bookWatch.outcomes)).toEqual(new Set(['applied']));
      expect(new Set(l3Watch.outcomes)).toEqual(new Set(['applied']));
      expect(book.restBook()).toEqual(rest.json());
      expect(book.checksum()).toBe(Number(rest.headers['x-book-checksum']));
      // The order-by-order book is the engine's, queue by queue (rebuilt here from the stored log).
      const { engine } = await replayLog(target.db(), btcusdt);
      const queue = (side: 'buy' | 'sell') =>
        engine
          .liveOrders()
          .book.filter((o) => o.side === side)
          .map((o) => ({
            order_id: o.id,
            price: Number(o.price) / 100,
            amount: Number(o.remaining) / 1e6,
            at: o.time,
          }));
      expect(l3.orders('bid')).toEqual(queue('buy'));
      expect(l3.orders('ask')).toEqual(queue('sell'));
      expect(l3.orders('bid').length + l3.orders('ask').length).toBeGreaterThan(20);

      // The altered diff fails its checksum; resubscribing brings a snapshot that checks out again.
      await tampered.until(
        () => {
          victimWatch.sync();
          return victimWatch.outcomes.includes('mismatch') ? true : undefined;
        },
        10_000,
        'the mismatch',
      );
      expect(victimWatch.outcomes.indexOf('mismatch')).toBe(40);
      expect(victim.lastSeq).toBeUndefined();
      await tampered.request({ op: 'subscribe', channel: 'book', market: MARKET, id: 3 });
      await tampered.until(
        () => {
          victimWatch.sync();
          return victim.lastSeq !== undefined ? true : undefined;
        },
        10_000,
        'the fresh snapshot',
      );
      expect(victimWatch.outcomes.at(-1)).toBe('applied');
      expect(victim.restBook()).toEqual(rest.json());
      for (const socket of sockets) socket.close();
      observer.close();
      tampered.close();
    }, 180_000);
});
