import { crc32 } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { L3Follower } from '../../src/feed/book-follower.js';
import { bookChecksum, type ChecksumEntry, l3Checksum, minorOf } from '../../src/feed/checksum.js';
import { crc32Combine } from '../../src/feed/crc32-combine.js';
import { L3Book, type L3Change } from '../../src/feed/l3-book.js';
import { MarketFrames } from '../../src/feed/market-frames.js';
import { MatchingEngine } from '../../src/matching/engine.js';
import type { SnapshotOrder } from '../../src/matching/snapshot.js';
import type { EngineEvent } from '../../src/matching/types.js';
import { EMPTY_VIEW } from '../../src/orders/book-view.js';
import type { CommittedBatch } from '../../src/orders/commits.js';
import { DEFAULT_FEES, tradingMarkets } from '../../src/orders/markets.js';
import { SPEC } from '../matching/fixtures.js';
import { randomCommands, rng } from '../matching/random-commands.js';
import { reference } from '../support/targets.js';

/** A decimal text at a fixed precision as minor units (as the server holds it). */
const minor = (text: string, precision: number): bigint => {
  const [whole = '0', fraction = ''] = text.split('.');
  return BigInt(whole + fraction.padEnd(precision, '0'));
};

describe('Kraken checksums (pure)', () => {
  it('the book checksum of Kraken’s published example book (WebSocket v1 guide) is 974947235', () => {
    // docs.kraken.com "Spot Websockets (v1) Book Checksum": ten asks 0.05005..0.05050 and ten bids
    // 0.05000..0.04950, each 0.00000500; prices with 5 decimals, volumes with 8.
    const asks = [
      '0.05005',
      '0.05010',
      '0.05015',
      '0.05020',
      '0.05025',
      '0.05030',
      '0.05035',
      '0.05040',
      '0.05045',
      '0.05050',
    ];
    const bids = [
      '0.05000',
      '0.04995',
      '0.04990',
      '0.04980',
      '0.04975',
      '0.04970',
      '0.04965',
      '0.04960',
      '0.04955',
      '0.04950',
    ];
    const level = (price: string): ChecksumEntry => [minor(price, 5), minor('0.00000500', 8)];
    expect(bookChecksum(asks.map(level), bids.map(level))).toBe(974947235);
    // Only the top ten of each side count; the order of the sides matters.
    expect(bookChecksum([...asks, '0.05055'].map(level), bids.map(level))).toBe(974947235);
    expect(bookChecksum(bids.map(level), asks.map(level))).not.toBe(974947235);
    // A client reads the frame's JSON numbers at the market's precision.
    expect(minorOf(0.05005, 5)).toBe(5005n);
    expect(minorOf(0.000005, 8)).toBe(500n);
  });

  it('the L3 checksum of Kraken’s published level3 example (WebSocket v2 guide) is 1063832831', () => {
    // docs.kraken.com "Spot Websockets (v2) Level3 Checksum": prices with 1 decimal, quantities with 8.
    const asks: [string, string[]][] = [
      ['44939.5', ['4.52308393', '0.00111261', '0.00100000', '0.01000000']],
      ['44950.0', ['0.10334926']],
      ['44953.0', ['0.00064537']],
      ['44955.0', ['0.00250000']],
      ['44959.6', ['0.35630000', '0.35630000']],
      ['44960.1', ['0.00338072']],
      ['44960.2', ['0.88967575']],
      ['44967.0', ['3.14392283']],
      ['44978.5', ['0.06778960']],
      ['44979.2', ['0.35630000']],
    ];
    const bids: [string, string[]][] = [
      [
        '44939.4',
        [
          '0.88968699',
          '0.45210000',
          '0.10000000',
          '0.14296323',
          '0.25000000',
          '0.10292988',
          '0.33880000',
          '1.28140860',
        ],
      ],
      ['44937.1', ['0.03346877']],
      ['44934.7', ['0.35630000']],
      ['44930.2', ['0.22734299', '0.01000000', '0.05550000', '0.70000000', '0.15000000']],
      ['44928.0', ['0.00105240']],
      ['44919.6', ['0.33870000']],
      ['44919.5', ['0.07610000']],
      ['44912.0', ['0.35630000']],
      ['44909.7', ['0.06690000']],
      ['44901.9', ['0.00088982']],
    ];
    const levels = (side: [string, string[]][]) =>
      side.map(([price, orders]) => orders.map((qty): ChecksumEntry => [minor(price, 1), minor(qty, 8)]));
    expect(l3Checksum(levels(asks), levels(bids))).toBe(1063832831);
    // The queue order counts: two orders of one level swapped change it.
    const swapped = levels(bids);
    swapped[0] = [swapped[0]![1]!, swapped[0]![0]!, ...swapped[0]!.slice(2)];
    expect(l3Checksum(levels(asks), swapped)).not.toBe(1063832831);
  });
});

describe('CRC32 of a concatenation from its parts (pure)', () => {
  it('gives crc(A || B) from crc(A), crc(B) and the length of B, and crc(B) back from crc(A || B)', () => {
    const random = rng(32);
    for (let i = 0; i < 500; i += 1) {
      const text = (n: number) => Array.from({ length: n }, () => String(Math.floor(random() * 10))).join('');
      const a = text(Math.floor(random() * 40));
      const b = text(Math.floor(random() * 4_000));
      expect(crc32Combine(crc32(a), crc32(b), b.length)).toBe(crc32(a + b));
      expect(crc32Combine(crc32(a), crc32(a + b), b.length)).toBe(crc32(b));
    }
  });
});

/** The engine's resting orders of one side in priority order, as the L3 book shows them. */
function engineSide(engine: MatchingEngine, side: 'buy' | 'sell') {
  return engine
    .liveOrders()
    .book.filter((order) => order.side === side)
    .map((order) => ({
      id: order.id,
      side: order.side,
      price: BigInt(order.price),
      amount: BigInt(order.remaining),
      at: order.time,
    }));
}

/** The changes as a client would receive them in a `book_l3` diff (checksum.ts precisions: 2 and 3). */
function wire(changes: readonly L3Change[]) {
  return changes.map(({ type, order }) => ({
    type,
    side: order.side === 'buy' ? ('bid' as const) : ('ask' as const),
    order_id: order.id,
    price: Number(order.price) / 100,
    amount: Number(order.amount) / 1000,
    at: order.at,
  }));
}

describe('order-by-order book from the engine’s events (pure)', () => {
  for (const [seed, orderOptions] of [
    [1, false],
    [2, false],
    [3, false],
    [44, false],
    [43, true],
    [143, true],
  ] as const) {
    it(`positions match the engine’s queues after every batch of a random run (seed ${seed}${orderOptions ? ', with amends, time in force and stp modes' : ''})`, () => {
      const random = rng(seed * 7);
      const commands = randomCommands({ seed, count: 3_000, accounts: 5, orderOptions });
      const engine = new MatchingEngine(SPEC);
      let book = new L3Book(engine.liveOrders());
      const client = new L3Follower({ price: 2, amount: 3 });
      expect(client.apply({ event: 'snapshot', seq: 0, bids: [], asks: [] })).toBe('applied');
      let seq = 0;
      for (let i = 0; i < commands.length; ) {
        const size = 1 + Math.floor(random() * 12);
        const events: EngineEvent[] = [];
        for (const command of commands.slice(i, i + size)) {
          const result = engine.apply(command);
          if (result.ok) events.push(...result.events);
        }
        i += size;
        const changes = book.applyBatch(events);
        expect(book.side('buy')).toEqual(engineSide(engine, 'buy'));
        expect(book.side('sell')).toEqual(engineSide(engine, 'sell'));
        // A client applying the batch's changes keeps the same queues and agrees with the checksum.
        const outcome = client.apply({
          event: 'diff',
          seq: seq + 1,
          prev_seq: seq,
          checksum: book.checksum(),
          events: wire(changes),
        });
        expect(outcome).toBe('applied');
        seq += 1;
        // Half-way, a follower starts over from the engine's live orders (a node that starts late).
        if (i >= commands.length / 2 && i - size < commands.length / 2)
          book = new L3Book(engine.liveOrders());
      }
      expect(book.size).toBeGreaterThan(0);
    });
  }

  it('a stop that triggers and rests joins the end of its level after the orders already there', () => {
    const engine = new MatchingEngine(SPEC);
    const book = new L3Book(engine.liveOrders());
    const apply = (...commands: Parameters<MatchingEngine['apply']>[0][]) => {
      const events: EngineEvent[] = [];
      for (const command of commands) {
        const result = engine.apply(command);
        if (result.ok) events.push(...result.events);
      }
      return book.applyBatch(events);
    };
    const time = 1_000;
    apply(
      { type: 'limit', id: 1, account: 'a', side: 'buy', price: 9_900n, amount: 5n, time },
      {
        type: 'limit_stop_loss',
        id: 2,
        account: 'b',
        side: 'buy',
        price: 9_900n,
        stopPrice: 10_000n,
        amount: 7n,
        time,
      },
    );
    // A trade at 10,000 triggers the stop; it cannot cross (no ask at 9,900) and rests behind order 1.
    const changes = apply(
      { type: 'limit', id: 3, account: 'c', side: 'sell', price: 10_000n, amount: 2n, time: time + 1 },
      { type: 'limit', id: 4, account: 'd', side: 'buy', price: 10_000n, amount: 2n, time: time + 2 },
    );
    expect(changes.map((c) => [c.type, c.order.id, c.order.amount])).toEqual([['add', 2, 7n]]);
    expect(book.side('buy').map((o) => o.id)).toEqual([1, 2]);
    expect(book.side('buy')).toEqual(engineSide(engine, 'buy'));
  });

  it('a client detects a diff altered on the way by the checksum', () => {
    const engine = new MatchingEngine(SPEC);
    const book = new L3Book(engine.liveOrders());
    const client = new L3Follower({ price: 2, amount: 3 });
    client.apply({ event: 'snapshot', seq: 0, bids: [], asks: [] });
    const result = engine.apply({
      type: 'limit',
      id: 1,
      account: 'a',
      side: 'buy',
      price: 9_900n,
      amount: 5n,
      time: 1,
    });
    const changes = wire(book.applyBatch(result.ok ? result.events : []));
    const altered = changes.map((change) => ({ ...change, amount: change.amount + 0.001 }));
    expect(
      client.apply({ event: 'diff', seq: 1, prev_seq: 0, checksum: book.checksum(), events: altered }),
    ).toBe('mismatch');
    expect(client.lastSeq).toBeUndefined();
  });
});

describe('the order-by-order book starts over when events do not fit it', () => {
  it('reports it, sends the whole book as one diff, and skips the batches that book holds', () => {
    const btcusdt = tradingMarkets(reference, DEFAULT_FEES).get('btcusdt')!;
    const errors: unknown[] = [];
    const resting: SnapshotOrder = {
      id: 7,
      account: '1',
      side: 'buy',
      price: '3700000',
      stopPrice: null,
      remaining: '5000',
      time: 1,
    };
    const frames = new MarketFrames(btcusdt, EMPTY_VIEW, { book: [], stops: [] }, 0, {
      live: () => ({ orders: { book: [resting], stops: [] }, seq: 5 }),
      onError: (error) => errors.push(error),
    });
    const batch = (seq: number, events: EngineEvent[]): CommittedBatch => ({
      market: btcusdt,
      seq,
      prevSeq: seq - 1,
      trades: [],
      orders: [],
      balances: new Map(),
      levels: { bids: [], asks: [] },
      events,
      lastPrice: null,
    });
    // A trade of a maker this book never saw.
    const stray: EngineEvent = {
      type: 'trade',
      seq: 1,
      time: 1,
      market: 'btcusdt',
      tradeId: 1,
      price: 1n,
      amount: 1n,
      quote: 1n,
      takerSide: 'buy',
      buyOrderId: 9,
      buyAccount: '1',
      sellOrderId: 8,
      sellAccount: '2',
      buyerFee: 0n,
      sellerFee: 0n,
      buyerRelease: 0n,
      selfTrade: false,
    };
    const first = JSON.parse(frames.take(batch(4, [stray]))!.l3.toString());
    expect(errors).toHaveLength(1);
    expect(first.events).toEqual([
      { type: 'add', side: 'bid', order_id: 7, price: 37000, amount: 0.005, at: 1 },
    ]);
    // Batch 5 is in that book already: no change; batch 6 applies.
    expect(JSON.parse(frames.take(batch(5, [stray]))!.l3.toString()).events).toEqual([]);
    expect(frames.l3.side('buy').map((o) => o.id)).toEqual([7]);
    expect(errors).toHaveLength(1);
  });
});
