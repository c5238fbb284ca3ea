import { seedName, testSeeds } from '@platform/testkit/seeds';
import { describe, expect, it } from 'vitest';
import { MatchingEngine } from '../../src/matching/engine.js';
import type { EngineEvent } from '../../src/matching/types.js';
import { lockFor } from '../../src/matching/validate.js';
import { SPEC } from './fixtures.js';
import { LedgerSim } from './ledger-sim.js';
import { randomCommands } from './random-commands.js';

const spec = { ...SPEC, tickSize: 5n, makerFeePpm: 1_500, takerFeePpm: 2_500 };

/** Engine-side checks: the visible book agrees with the live orders and nothing crosses. */
function bookProblems(engine: MatchingEngine): string[] {
  const problems: string[] = [];
  const { bids, asks } = engine.depth();
  const bestBid = bids[0]?.[0];
  const bestAsk = asks[0]?.[0];
  if (bestBid !== undefined && bestAsk !== undefined && bestBid >= bestAsk) {
    problems.push(`book crossed: ${bestBid} >= ${bestAsk}`);
  }
  const snapshot = engine.snapshot();
  for (const [entries, side] of [
    [bids, 'buy'],
    [asks, 'sell'],
  ] as const) {
    for (const [price, volume, count] of entries) {
      const orders = snapshot.book.filter((o) => o.side === side && BigInt(o.price) === price);
      const sum = orders.reduce((s, o) => s + BigInt(o.remaining), 0n);
      if (sum !== volume || orders.length !== count) problems.push(`level ${side} ${price} disagrees`);
    }
  }
  if (snapshot.book.length + snapshot.stops.length !== engine.openOrders) problems.push('live count differs');
  return problems;
}

describe('randomized trading from many accounts keeps every invariant after every step', () => {
  for (const seed of testSeeds([1, 2, 3]))
    it(seedName(seed), () => {
      const engine = new MatchingEngine(spec);
      const ledger = new LedgerSim();
      const accounts = 25;
      for (let a = 0; a < accounts; a++) {
        // Every fifth account is poor, so some orders cannot be funded and are refused before the engine.
        const poor = a % 5 === 0;
        ledger.deposit(`acct${a}`, 'base', poor ? 300n : 5_000n + BigInt(a) * 100n);
        ledger.deposit(`acct${a}`, 'quote', poor ? 3_000_000n : 60_000_000n + BigInt(a) * 1_000_000n);
      }
      const commands = randomCommands({ seed, count: 4_000, accounts });
      const seen = { accepted: 0, trade: 0, done: 0, stop_triggered: 0, amended: 0, refused: 0, unfunded: 0 };
      for (const [step, cmd] of commands.entries()) {
        const result = ledger.submit(engine, cmd);
        if (result === 'INSUFFICIENT_FUNDS') seen.unfunded++;
        else if (!result.ok) seen.refused++;
        else {
          for (const event of result.events as EngineEvent[]) seen[event.type]++;
          // The pre-check the order-entry path runs (lockFor) asks for exactly what the engine locks.
          const first = result.events[0];
          if (first?.type === 'accepted') {
            expect(lockFor(engine.market, cmd)).toEqual({ asset: first.lockAsset, amount: first.lock });
          }
        }
        const problems = [...ledger.check(), ...bookProblems(engine)];
        if (problems.length > 0)
          throw new Error(
            `${seedName(seed)}, step ${step} (${JSON.stringify(cmd, bigints)}): ${problems.join('; ')}`,
          );
        expect(ledger.openOrders()).toBe(engine.openOrders);
      }
      // The mix really exercised the engine: trades, stops, cancels, refusals and unfunded orders.
      expect(seen.trade).toBeGreaterThan(500);
      expect(seen.stop_triggered).toBeGreaterThan(20);
      expect(seen.refused).toBeGreaterThan(100);
      expect(seen.unfunded).toBeGreaterThan(0);
      expect(ledger.fees.base + ledger.fees.quote).toBeGreaterThan(0n);
    });
});

function bigints(_key: string, value: unknown): unknown {
  return typeof value === 'bigint' ? `${value}n` : value;
}

describe('the ledger simulator itself', () => {
  it('detects an event stream that breaks the rules (so the randomized test can fail)', () => {
    const engine = new MatchingEngine(spec);
    const ledger = new LedgerSim();
    ledger.deposit('a', 'base', 100n);
    ledger.deposit('b', 'quote', 10_000_000n);
    ledger.submit(engine, {
      type: 'limit',
      id: 1,
      account: 'a',
      side: 'sell',
      price: 10_000n,
      amount: 100n,
      time: 1,
    });
    const result = engine.apply({
      type: 'limit',
      id: 2,
      account: 'b',
      side: 'buy',
      price: 10_000n,
      amount: 100n,
      time: 2,
    });
    if (!result.ok) throw new Error(result.code);
    for (const event of result.events) {
      // Forge a trade that sells one more unit than the seller's order had locked.
      ledger.apply(event.type === 'trade' ? { ...event, amount: event.amount + 1n } : event);
    }
    const problems = ledger.check().join('; ');
    expect(problems).toMatch(/used more than it locked/);
    expect(problems).toMatch(/a base negative/);
    expect(problems).toMatch(/beyond its amount/);
  });
});
