import { describe, expect, it } from 'vitest';
import { RollingDay, type WindowStats, type WindowTrade } from '../../src/market-stats/rolling-day.js';
import { seededRandom } from '../support/random.js';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

const trade = (id: number, createdAt: number, price: bigint, amount = 1n): WindowTrade => ({
  id,
  createdAt,
  price,
  amount,
  quote: price * amount,
});

/** The definition: every trade with createdAt >= now - window, first/last by id. */
function oracle(trades: readonly WindowTrade[], now: number, windowMs: number): WindowStats | undefined {
  const inside = trades.filter((t) => t.createdAt >= now - windowMs);
  if (inside.length === 0) return undefined;
  const prices = inside.map((t) => t.price);
  return {
    open: inside[0]!.price,
    last: inside[inside.length - 1]!.price,
    high: prices.reduce((a, b) => (b > a ? b : a)),
    low: prices.reduce((a, b) => (b < a ? b : a)),
    volume: inside.reduce((sum, t) => sum + t.amount, 0n),
    funds: inside.reduce((sum, t) => sum + t.quote, 0n),
  };
}

describe('rolling 24 h statistics', () => {
  it('is empty before the first trade and after the last one expires', () => {
    const day = new RollingDay(DAY);
    expect(day.stats(0)).toBeUndefined();
    day.add(trade(1, 1_000, 50n));
    expect(day.stats(1_000)).toEqual({ open: 50n, last: 50n, high: 50n, low: 50n, volume: 1n, funds: 50n });
    // Still inside at exactly 24 h (createdAt >= now - 24 h), gone one millisecond later.
    expect(day.stats(1_000 + DAY)?.last).toBe(50n);
    expect(day.stats(1_001 + DAY)).toBeUndefined();
    expect(day.size).toBe(0);
  });

  it('gives the next high and low once the trades that made them expire', () => {
    const day = new RollingDay(DAY);
    day.add(trade(1, 0, 100n)); // high, expires first
    day.add(trade(2, HOUR, 10n)); // low, expires second
    day.add(trade(3, 2 * HOUR, 60n));
    day.add(trade(4, 3 * HOUR, 40n));
    day.add(trade(5, 4 * HOUR, 60n));
    expect(day.stats(4 * HOUR)).toMatchObject({ open: 100n, last: 60n, high: 100n, low: 10n });
    expect(day.stats(DAY + 1)).toMatchObject({ open: 10n, high: 60n, low: 10n, volume: 4n });
    expect(day.stats(DAY + HOUR + 1)).toMatchObject({ open: 60n, high: 60n, low: 40n, volume: 3n });
    // Trade 3 (60) leaves; trade 5 (also 60) still holds the high.
    expect(day.stats(DAY + 2 * HOUR + 1)).toMatchObject({ open: 40n, high: 60n, low: 40n, volume: 2n });
    expect(day.stats(DAY + 3 * HOUR + 1)).toMatchObject({ open: 60n, high: 60n, low: 60n, funds: 60n });
  });

  it('ignores a trade id it has seen (a replayed batch after a restore)', () => {
    const day = new RollingDay(DAY);
    day.add(trade(7, 0, 5n));
    day.add(trade(7, 0, 5n));
    day.add(trade(6, 0, 9n));
    expect(day.stats(0)).toMatchObject({ volume: 1n, high: 5n });
    expect(day.newestId).toBe(7);
  });

  it('equals the definition after random trades and clock moves', () => {
    const random = seededRandom(42);
    for (let run = 0; run < 12; run += 1) {
      const windowMs = 1 + random(5_000);
      const day = new RollingDay(windowMs);
      const all: WindowTrade[] = [];
      let now = random(1_000);
      for (let step = 0; step < 1_000; step += 1) {
        // Many trades in one millisecond, quiet stretches longer than the window, and reads between.
        const move = random(10);
        if (move < 6) {
          const t = trade(all.length + 1, now, BigInt(1 + random(50)), BigInt(1 + random(9)));
          all.push(t);
          day.add(t);
        } else if (move < 9) {
          now += random(move === 8 ? windowMs * 2 : 200);
        }
        expect(day.stats(now)).toEqual(oracle(all, now, windowMs));
      }
    }
  });

  it('stays exact over long runs, where its queues cut their dead prefixes', () => {
    const windowMs = 1_000;
    const day = new RollingDay(windowMs);
    const all: WindowTrade[] = [];
    for (let i = 1; i <= 6_000; i += 1) {
      const t = trade(i, i, BigInt(1 + ((i * 37) % 101)));
      all.push(t);
      day.add(t);
      if (i % 50 === 0) expect(day.stats(i)).toEqual(oracle(all.slice(-2 * windowMs), i, windowMs));
    }
    expect(day.size).toBe(windowMs + 1);
  });
});
