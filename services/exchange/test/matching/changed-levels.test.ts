import { seedName, testSeeds } from '@platform/testkit/seeds';
import { describe, expect, it } from 'vitest';
import { MatchingEngine } from '../../src/matching/engine.js';
import { EMPTY_VIEW } from '../../src/orders/book-view.js';
import { LevelBook } from '../../src/orders/level-book.js';
import { SPEC } from './fixtures.js';
import { LedgerSim } from './ledger-sim.js';
import { randomCommands } from './random-commands.js';

const spec = { ...SPEC, tickSize: 5n };

/**
 * The writer publishes only the levels a batch changed (orders/writer.ts); followers keep the book
 * from them (LevelBook). After every batch of random commands (fills, self-trades, stops, cancels)
 * that copy must be the engine's whole book.
 */
describe('the levels an engine reports changed keep a copy of its book exact', () => {
  for (const seed of testSeeds([1, 2]))
    it(seedName(seed), () => {
      const engine = new MatchingEngine(spec);
      engine.followLevels();
      const ledger = new LedgerSim();
      const accounts = 12;
      for (let a = 0; a < accounts; a++) {
        ledger.deposit(`acct${a}`, 'base', 5_000n);
        ledger.deposit(`acct${a}`, 'quote', 60_000_000n);
      }
      const copy = new LevelBook(EMPTY_VIEW);
      const commands = randomCommands({ seed, count: 3_000, accounts });
      let changes = 0;
      for (const [index, cmd] of commands.entries()) {
        ledger.submit(engine, cmd);
        // Batches of 1 to 7 commands, as the writer's group commit makes them.
        if (index % 7 !== seed % 7) continue;
        const levels = engine.takeChangedLevels();
        changes += levels.bids.length + levels.asks.length;
        copy.apply(levels, engine.lastPrice);
        const depth = engine.depth();
        expect(copy.view()).toEqual({ bids: depth.bids, asks: depth.asks, lastPrice: engine.lastPrice });
      }
      expect(changes).toBeGreaterThan(500);
    });
});
