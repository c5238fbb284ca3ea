import { describe, expect, it } from 'vitest';
import { CANCELLED, ClosedOrders, FILLED } from '../../src/matching/closed-orders.js';
import { OrderIndex } from '../../src/matching/order-index.js';
import { OrderNode } from '../../src/matching/order-list.js';
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
});

describe('closed order statuses', () => {
  it('remember filled and cancelled per id across pages, sparse and large ids', () => {
    const closed = new ClosedOrders();
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

describe('live order index', () => {
  it('finds, replaces and forgets nodes by id across pages and drops empty pages', () => {
    const index = new OrderIndex();
    const node = (id: number) => new OrderNode(id, 'a', 0, 100, 0, 1, 0);
    const ids = [1, 255, 256, 257, 70_000, 2 ** 45 + 1];
    for (const id of ids) index.set(id, node(id));
    expect(index.size).toBe(ids.length);
    expect(ids.map((id) => index.get(id)?.id)).toEqual(ids);
    expect(index.get(2)).toBeUndefined();
    index.set(256, node(256));
    expect(index.size).toBe(ids.length);
    for (const id of ids) index.delete(id);
    index.delete(12345);
    expect(index.size).toBe(0);
    expect(ids.some((id) => index.has(id))).toBe(false);
    index.set(257, node(257));
    expect(index.get(257)?.id).toBe(257);
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
