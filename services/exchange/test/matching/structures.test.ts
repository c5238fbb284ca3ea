import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CANCELLED, ClosedOrders, FILLED } from '../../src/matching/closed-orders.js';
import { IdKeys } from '../../src/matching/id-keys.js';
import { OrderIndex } from '../../src/matching/order-index.js';
import { BUY, Level, NIL, OrderStore, SELL } from '../../src/matching/order-list.js';
import { PageDirectory } from '../../src/matching/page-directory.js';
import { cancel, engine, limit, market, ofType, ok } from './fixtures.js';

describe('price levels', () => {
  it('stay sorted and reusable through lazy deletion and compaction of thousands of empty levels', () => {
    const e = engine({ makerFeePpm: 0, takerFeePpm: 0 });
    // 3,000 bid levels from 10,000 down, inserted in a shuffled order.
    const prices = Array.from({ length: 3_000 }, (_, i) => 10_000 - i);
    for (let i = prices.length - 1; i > 0; i--) {
      const j = (i * 7919) % (i + 1);
      [prices[i], prices[j]] = [prices[j]!, prices[i]!];
    }
    prices.forEach((price, i) => {
      ok(e, limit(i + 1, `a${i % 7}`, 'buy', BigInt(price), 1n));
    });
    // Cancel every level except each tenth one (this crosses the compaction threshold).
    prices.forEach((price, i) => {
      if (price % 10 !== 0) ok(e, cancel(i + 1));
    });
    const bids = e.depth().bids;
    expect(bids).toHaveLength(300);
    expect(bids.map(([p]) => p)).toEqual([...bids.map(([p]) => p)].sort((a, b) => (a > b ? -1 : 1)));
    // A level emptied earlier takes a new order again, in the right place.
    ok(e, limit(5_001, 'z', 'buy', 9_995n, 4n));
    expect(e.depth(3).bids).toEqual([
      [10_000n, 1n, 1],
      [9_995n, 4n, 1],
      [9_990n, 1n, 1],
    ]);
    // Matching walks the levels best first.
    const trades = ofType(ok(e, market(5_002, 'seller', 'sell', 7n)), 'trade');
    expect(trades.map((t) => [t.price, t.amount])).toEqual([
      [10_000n, 1n],
      [9_995n, 4n],
      [9_990n, 1n],
      [9_980n, 1n],
    ]);
  });

  it('are found by price inside and outside the price window, and after it moved with the book', () => {
    const e = engine({ makerFeePpm: 0, takerFeePpm: 0 });
    // Asks from 1,000 up in steps of 97: most far outside a window of 4,096 prices around the first,
    // so the window moves several times (price-ladder.ts) while levels already rest in it.
    const prices = Array.from({ length: 2_000 }, (_, i) => 1_000 + i * 97);
    prices.forEach((price, i) => {
      ok(e, limit(i + 1, 'maker', 'sell', BigInt(price), 2n));
    });
    // Every level is found again by price: a second order joins it, a cancel leaves it.
    prices.forEach((price, i) => {
      ok(e, limit(10_001 + i, 'maker', 'sell', BigInt(price), 1n));
      ok(e, cancel(i + 1));
    });
    const asks = e.depth().asks;
    expect(asks).toHaveLength(2_000);
    expect(asks.map(([p, v, n]) => [Number(p), v, n])).toEqual(prices.map((p) => [p, 1n, 1]));
    // An amend moves an order between a far level and a near one, and back.
    const last = 10_000 + prices.length;
    ok(e, { type: 'amend', id: last, price: 1_001n, time: 0 });
    expect(e.depth(2).asks).toEqual([
      [1_000n, 1n, 1],
      [1_001n, 1n, 1],
    ]);
    ok(e, { type: 'amend', id: last, price: BigInt(prices.at(-1)!), time: 0 });
    expect(e.depth().asks).toHaveLength(2_000);
    // Matching takes them best first across the whole range.
    const trades = ofType(ok(e, market(20_000, 'taker', 'buy', 2_000n, 10n ** 15n)), 'trade');
    expect(trades.map((t) => Number(t.price))).toEqual(prices);
    // A book that drifts far (each level made, filled and dropped): the window follows it.
    for (let j = 0; j < 1_000; j++) {
      const price = 1_000_000n + BigInt(j * 50);
      ok(e, limit(30_000 + j, 'maker', 'sell', price, 1n));
      const fill = ofType(ok(e, market(40_000 + j, 'taker', 'buy', 1n, 10n ** 15n)), 'trade');
      expect(fill.map((t) => t.price)).toEqual([price]);
    }
    ok(e, limit(50_001, 'maker', 'sell', 1_049_990n, 1n));
    ok(e, limit(50_002, 'maker', 'sell', 1_049_991n, 1n));
    ok(e, limit(50_003, 'maker', 'sell', 1_049_990n, 2n));
    ok(e, { type: 'amend', id: 50_001, price: 1_049_992n, time: 0 });
    expect(e.depth().asks).toEqual([
      [1_049_990n, 2n, 1],
      [1_049_991n, 1n, 1],
      [1_049_992n, 1n, 1],
    ]);
  });
});

// Stride 1: ids as keys; 1024: a cluster's ids (id-keys.ts). The same answers either way.
describe.each([1, 1_024])('closed order statuses, id stride %i', (stride) => {
  it('remember filled and cancelled per id across pages, sparse and large ids', () => {
    const closed = new ClosedOrders(stride);
    const ids = [1, 2, 4_095, 4_096, 4_097, 1_000_000, 2 ** 40 + 3, Number.MAX_SAFE_INTEGER];
    for (const [i, id] of ids.entries()) closed.set(id, i % 2 === 0 ? FILLED : CANCELLED);
    expect(ids.map((id) => closed.get(id))).toEqual(ids.map((_, i) => (i % 2 === 0 ? FILLED : CANCELLED)));
    expect(closed.get(3)).toBeUndefined();
    expect(closed.get(4_098)).toBeUndefined();
    expect(closed.has(999_999)).toBe(false);
    closed.set(2, FILLED);
    expect(closed.get(2)).toBe(FILLED);
    expect(closed.size).toBe(ids.length);
    expect([...closed.entries()].map(([id]) => id)).toEqual(ids);
  });
});

describe.each([1, 1_024])('live order index, id stride %i', (stride) => {
  it('finds, replaces and forgets slots by id across pages, drops empty pages and reuses them', () => {
    const index = new OrderIndex(stride);
    const ids = [1, 255, 256, 257, 70_000, 2 ** 45 + 1];
    ids.forEach((id, slot) => {
      index.set(id, slot);
    });
    expect(index.size).toBe(ids.length);
    expect(ids.map((id) => index.get(id))).toEqual(ids.map((_, slot) => slot));
    expect(index.get(2)).toBe(NIL);
    expect(index.get(1_000_000)).toBe(NIL);
    index.set(256, 9);
    expect(index.get(256)).toBe(9);
    expect(index.size).toBe(ids.length);
    for (const id of ids) index.delete(id);
    index.delete(12345);
    index.delete(1);
    expect(index.size).toBe(0);
    expect(ids.some((id) => index.has(id))).toBe(false);
    // A page freed above comes back zeroed for other ids.
    index.set(513, 0);
    expect(index.get(513)).toBe(0);
    expect(index.get(514)).toBe(NIL);
    expect(index.get(257)).toBe(NIL);
  });

  it('grows its page pool past the initial size and keeps every entry', () => {
    const index = new OrderIndex(stride);
    // One id in each of 1,000 pages, then a full page.
    for (let p = 0; p < 1_000; p++) index.set(p * 256 + 7, p);
    for (let id = 300_000; id < 300_256; id++) index.set(id, id);
    expect(index.size).toBe(1_256);
    for (let p = 0; p < 1_000; p++) expect(index.get(p * 256 + 7)).toBe(p);
    for (let id = 300_000; id < 300_256; id++) expect(index.get(id)).toBe(id);
  });
});

describe("a cluster market's ids (one residue of the stride 1024)", () => {
  // Market slot 5 of a cluster (src/orders/writer.ts nextIdInSlot), from a page boundary of keys.
  const clusterIds = (count: number) => Array.from({ length: count }, (_, k) => (k + 409_600) * 1_024 + 5);

  it('take a status page per 4,096 finished orders, not one per 4', () => {
    const ids = clusterIds(40_960);
    const compact = new ClosedOrders(1_024);
    const byId = new ClosedOrders(1);
    for (const id of ids) {
      compact.set(id, FILLED);
      byId.set(id, CANCELLED);
    }
    expect(compact.pageCount).toBe(10);
    expect(byId.pageCount).toBe(10_240);
    expect(ids.every((id) => compact.get(id) === FILLED && byId.get(id) === CANCELLED)).toBe(true);
    expect(compact.get(ids[0]! + 1)).toBeUndefined();
    // Ids numbered one after the other before the cluster (every residue) still work beside them.
    for (let id = 1; id <= 3_000; id++) compact.set(id, CANCELLED);
    expect(compact.get(2_999)).toBe(CANCELLED);
    expect(compact.entries().map(([id]) => id)).toEqual([
      ...Array.from({ length: 3_000 }, (_, i) => i + 1),
      ...ids,
    ]);
  });

  it('share index pages of 256 live orders, not one page each', () => {
    const ids = clusterIds(2_560);
    const compact = new OrderIndex(1_024);
    const byId = new OrderIndex(1);
    ids.forEach((id, slot) => {
      compact.set(id, slot);
      byId.set(id, slot);
    });
    expect(compact.pageCount).toBe(10);
    expect(byId.pageCount).toBe(2_560);
    expect(ids.every((id, slot) => compact.get(id) === slot)).toBe(true);
    for (const id of ids) compact.delete(id);
    expect([compact.size, compact.pageCount]).toEqual([0, 0]);
  });

  it('map to keys one to one, consecutive within a residue', () => {
    const keys = new IdKeys(1_024);
    fc.assert(
      fc.property(fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }), (id) => {
        const key = keys.key(id);
        expect(Number.isSafeInteger(key)).toBe(true);
        expect(keys.id(key)).toBe(id);
        if (id + 1_024 <= Number.MAX_SAFE_INTEGER) expect(keys.key(id + 1_024)).toBe(key + 1);
      }),
      { numRuns: 2_000 },
    );
    // Neighbouring ids of different residues land far apart (distinct keys).
    expect(new Set([0, 1, 2, 1_023, 1_024, 1_025].map((id) => keys.key(id))).size).toBe(6);
    expect(new IdKeys(1).key(12_345)).toBe(12_345);
    expect(() => new IdKeys(1_000)).toThrow(/power of two/);
  });
});

describe('order store', () => {
  it('keeps the fields of each record, links FIFO lists, unlinks anywhere and reuses freed slots', () => {
    const store = new OrderStore();
    const level = new Level(100, 100);
    const alice = store.accountId('alice');
    expect(store.accountId('bob')).not.toBe(alice);
    expect(store.accountId('alice')).toBe(alice);
    expect(store.accountName(alice)).toBe('alice');
    // More than the initial capacity, so the buffer grows while lists are linked through it.
    const slots: number[] = [];
    for (let n = 0; n < 3_000; n++) {
      const slot = store.alloc(
        2 ** 40 + n,
        alice,
        n % 2 === 0 ? BUY : SELL,
        100,
        n === 5 ? 90 : 0,
        n + 1,
        n * 10,
      );
      store.push(level, slot);
      slots.push(slot);
    }
    expect(level.count).toBe(3_000);
    expect(level.total).toBe((3_000 * 3_001) / 2);
    const s = slots[5]!;
    expect([store.id(s), store.price(s), store.stopPrice(s), store.remaining(s), store.time(s)]).toEqual([
      2 ** 40 + 5,
      100,
      90,
      6,
      50,
    ]);
    expect([store.side(slots[4]!), store.side(s), store.account(s)]).toEqual([BUY, SELL, alice]);
    // Unlink the head, the tail and one in the middle; the FIFO order of the rest is kept.
    for (const at of [0, 2_999, 1_000]) {
      store.unlink(level, slots[at]!);
      store.free(slots[at]!);
    }
    const order: number[] = [];
    for (let slot = level.head; slot !== NIL; slot = store.next(slot)) order.push(store.id(slot) - 2 ** 40);
    expect(order).toEqual(
      Array.from({ length: 3_000 }, (_, n) => n).filter((n) => n !== 0 && n !== 2_999 && n !== 1_000),
    );
    expect(level.count).toBe(2_997);
    expect(level.total).toBe((3_000 * 3_001) / 2 - 1 - 3_000 - 1_001);
    // Freed slots are reused before the store grows; the remaining amount can change in place.
    const reused = store.alloc(7, alice, BUY, 101, 0, 4, 0);
    expect(slots.slice(0, 1).concat(slots[2_999]!, slots[1_000]!)).toContain(reused);
    store.setRemaining(reused, 3);
    expect(store.remaining(reused)).toBe(3);
    // Emptying the list leaves head and tail at NIL.
    for (let slot = level.head; slot !== NIL; slot = level.head) store.unlink(level, slot);
    expect([level.head, level.tail, level.count, level.total]).toEqual([NIL, NIL, 0, 0]);
  });
});

describe('page directory', () => {
  it('keeps pages near the first one in an array and any other page number in a map', () => {
    const pages = new PageDirectory<string>();
    pages.set(1_000, 'first');
    pages.set(1_003, 'near');
    pages.set(5, 'below');
    pages.set(1_000 + 2 ** 21, 'far above');
    expect([1_000, 1_003, 5, 1_000 + 2 ** 21, 1_001].map((n) => pages.get(n))).toEqual([
      'first',
      'near',
      'below',
      'far above',
      undefined,
    ]);
    expect(pages.entries().map(([n]) => n)).toEqual([5, 1_000, 1_003, 1_000 + 2 ** 21]);
    pages.delete(1_003);
    pages.delete(5);
    expect(pages.get(1_003)).toBeUndefined();
    expect(pages.entries().map(([, page]) => page)).toEqual(['first', 'far above']);
  });
});
