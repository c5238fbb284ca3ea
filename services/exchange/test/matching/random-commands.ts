import type { Command, Side } from '../../src/matching/types.js';

/** mulberry32: a small seeded generator so that every randomized run can be reproduced. */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export interface RandomOptions {
  readonly seed: number;
  readonly count: number;
  readonly accounts: number;
  /** Market budgets are drawn up to this (quote for buys, base for by-quote sells). */
  readonly maxBudget?: bigint;
  /**
   * Also time in force, post-only, self-trade prevention modes and amends (issue 43); off, the stream
   * is exactly the one before they existed.
   */
  readonly orderOptions?: boolean;
}

const STPS = ['expire_maker', 'expire_taker', 'expire_both', 'decrement', 'none'] as const;

/**
 * A seeded mix of every command kind from many accounts around a drifting mid price: limits (some
 * crossing), market by base and by quote on both sides, stop-limits on both sides, and cancels of
 * random ids (live, finished, or never used). Prices use tick 5 and amounts lot 1 of the test market.
 */
export function randomCommands(options: RandomOptions): Command[] {
  const random = rng(options.seed);
  const int = (n: number) => Math.floor(random() * n);
  const maxBudget = options.maxBudget ?? 50_000_000n;
  const commands: Command[] = [];
  let mid = 10_000;
  let nextId = 1;
  for (let i = 0; i < options.count; i++) {
    if (i % 20 === 0) mid = Math.max(1_000, mid + 5 * (int(9) - 4));
    const account = `acct${int(options.accounts)}`;
    const side: Side = random() < 0.5 ? 'buy' : 'sell';
    const away = side === 'buy' ? -1 : 1;
    const price = BigInt(mid + away * 5 * (int(12) - 2));
    const amount = BigInt(1 + int(200));
    const time = 1_000 + i;
    const roll = random();
    if (roll < 0.45) {
      if (!options.orderOptions)
        commands.push({ type: 'limit', id: nextId++, account, side, price, amount, time });
      else {
        const pick = int(6);
        commands.push({
          type: 'limit',
          id: nextId++,
          account,
          side,
          price,
          amount,
          time,
          stp: STPS[int(5)]!,
          ...(pick === 0 ? { tif: 'ioc' as const } : pick === 1 ? { tif: 'fok' as const } : {}),
          ...(pick === 2 ? { postOnly: true } : {}),
        });
      }
    } else if (options.orderOptions && roll < 0.6) {
      const change = int(3);
      commands.push({
        type: 'amend',
        // Mostly recent orders, which are more often still resting.
        id: Math.max(1, nextId - 1 - int(40)),
        time,
        ...(change !== 1 ? { amount: BigInt(1 + int(250)) } : {}),
        ...(change !== 0 ? { price: BigInt(mid + away * 5 * (int(12) - 2)) } : {}),
      });
    } else if (roll < 0.7) commands.push({ type: 'cancel', id: 1 + int(nextId + 2), time });
    else if (roll < 0.8) {
      const budget = 1n + BigInt(int(Number(maxBudget)));
      commands.push({ type: 'market', id: nextId++, account, side, amount, budget, time });
    } else if (roll < 0.88) {
      const quote = BigInt(1 + int(3_000_000));
      const budget = 1n + BigInt(int(400));
      commands.push({ type: 'market_by_quote', id: nextId++, account, side, quote, budget, time });
    } else {
      const stopPrice = BigInt(mid - away * 5 * (1 + int(6)));
      const limitPrice = stopPrice - BigInt(away * 5 * int(4));
      commands.push({
        type: 'limit_stop_loss',
        id: nextId++,
        account,
        side,
        price: limitPrice,
        stopPrice,
        amount,
        time,
      });
    }
  }
  return commands;
}
