import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLOSE } from '../../src/feed/errors.js';
import { FeedHub } from '../../src/feed/hub.js';
import type { OutgoingFrame, Peer } from '../../src/feed/peer.js';
import { MarketStats } from '../../src/market-stats/market-stats.js';
import { CommitFeed, type CommittedBatch } from '../../src/orders/commits.js';
import { OrderService } from '../../src/orders/service.js';
import { credit, newAccount } from '../support/accounts.js';
import { reference, usePgliteTarget } from '../support/targets.js';

// A node of a cluster that follows a market may meet a batch logged without its feed (it stalled past
// its wish for one, 066_feed_wanted.sql): the batch is published with `feedMissing` and no trades,
// orders or balances. What shows them must not go on as if there were none: the rolling statistics
// read the market's window again from the stored trades, and the live feed closes (4009) the
// connections that follow trades or private channels, which would miss frames without a sign.
const target = usePgliteTarget();
const MARKET = 'btcuah';

describe('a followed batch without its feed', () => {
  let service: OrderService;
  let trades: number;
  beforeAll(async () => {
    const db = target.db();
    service = await OrderService.start({ db, reference, now: Date.now });
    const [buyer, seller] = [(await newAccount(db)).id, (await newAccount(db)).id];
    await credit(db, buyer, 'uah', 10n ** 16n);
    await credit(db, seller, 'btc', 10n ** 12n);
    for (let i = 0; i < 3; i += 1) {
      await service.place(MARKET, {
        type: 'limit',
        accountId: seller,
        side: 'sell',
        price: 1_500_000n,
        amount: 10_000n,
      });
      await service.place(MARKET, {
        type: 'limit',
        accountId: buyer,
        side: 'buy',
        price: 1_500_000n,
        amount: 10_000n,
      });
    }
    const { rows } = await db.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM trades WHERE market = $1',
      [MARKET],
    );
    trades = rows[0]!.n;
    expect(trades).toBe(3);
  });
  afterAll(async () => {
    await service?.close();
  });

  /** The batch a follower publishes for a logged row without a feed. */
  const missing = (): CommittedBatch => {
    const writer = service.writer(MARKET)!;
    return {
      market: writer.market,
      seq: writer.commandSeq + 1,
      prevSeq: writer.commandSeq,
      trades: [],
      orders: [],
      balances: new Map(),
      levels: { bids: [], asks: [] },
      events: [],
      lastPrice: null,
      feedMissing: true,
    };
  };

  it('the rolling statistics read the window again from the stored trades', async () => {
    // Statistics following a feed of their own. They read the stored trades at start, so they start
    // on a clock a day past the trades (an empty window); with the clock moved back, only a read
    // again brings the trades in.
    const feed = new CommitFeed();
    let clock = Date.now() + 48 * 3_600_000;
    const stats = await MarketStats.start({
      db: target.db(),
      orders: { markets: service.markets, writer: (id) => service.writer(id), commits: feed },
      clock: () => clock,
    });
    try {
      clock = Date.now();
      expect(stats.day(MARKET, clock)).toBeUndefined();
      feed.publish(missing());
      let day = stats.day(MARKET, clock);
      for (let i = 0; i < 200 && day === undefined; i += 1) {
        await new Promise((resolve) => setTimeout(resolve, 10));
        day = stats.day(MARKET, clock);
      }
      expect(day).toMatchObject({ volume: 30_000n, last: 1_500_000n });
    } finally {
      stats.close();
    }
  });

  it('the live feed closes the trades followers of the market and every private follower (4009), not the book ones', () => {
    const hub = new FeedHub(service, reference);
    hub.start();
    try {
      const peer = () => {
        const seen = {
          frames: [] as OutgoingFrame[],
          closed: undefined as number | undefined,
          reason: undefined as string | undefined,
        };
        const p: Peer = {
          deliver: (frame) => seen.frames.push(frame),
          close: (code, reason) => {
            seen.closed = code;
            seen.reason = reason;
          },
        };
        return { p, seen };
      };
      const trades = peer();
      const otherMarketTrades = peer();
      const book = peer();
      const orders = peer();
      const balances = peer();
      hub.addPublic(trades.p, 'trades', MARKET);
      hub.addPublic(otherMarketTrades.p, 'trades', 'ethuah');
      hub.addPublic(book.p, 'book', MARKET);
      hub.addPrivate(orders.p, 'orders', 1);
      hub.addPrivate(balances.p, 'balances', 2);
      service.commits.publish(missing());
      hub.flush();
      expect(trades.seen.closed).toBe(CLOSE.feedGap);
      const seq = service.writer(MARKET)!.commandSeq + 1;
      // Where the client should read from: the market and the batch's sequence numbers.
      expect(trades.seen.reason).toBe(`feed gap: ${MARKET} seq ${seq}-${seq} not logged; resubscribe`);
      expect(orders.seen.closed).toBe(CLOSE.feedGap);
      expect(balances.seen.closed).toBe(CLOSE.feedGap);
      expect(otherMarketTrades.seen.closed).toBeUndefined();
      expect(book.seen.closed).toBeUndefined();
    } finally {
      hub.stop();
    }
  });
});
