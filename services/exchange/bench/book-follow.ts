/**
 * What following the committed book costs per order batch, by book depth: before, the writer copied
 * the whole book after every batch (`captureView`) for the feed and market stats; now the engine
 * reports the levels the batch changed (`takeChangedLevels`) and each follower applies them to its own
 * copy (market stats' LevelBook, the feed's GroupedLevels). In-process, no database: a btcuah engine
 * with `depth` resting levels per side, then batches of `--batch` crossing and resting limit orders
 * near the top; the median of `--repeat` timed runs of `--batches` batches each (after a warm-up run of each), µs
 * of CPU per batch including the engine's own work (`engine only`).
 *
 *   npm run bench:book-follow -w services/exchange [-- --batch 8 --batches 2000 --repeat 5]
 */

import { DEFAULT_REFERENCE_FILE } from '../src/config.js';
import { GroupedLevels } from '../src/feed/grouped-book.js';
import { MatchingEngine } from '../src/matching/engine.js';
import type { Command } from '../src/matching/types.js';
import { captureView } from '../src/orders/book-view.js';
import { LevelBook } from '../src/orders/level-book.js';
import { DEFAULT_FEES, tradingMarkets } from '../src/orders/markets.js';
import { loadReferenceData } from '../src/reference/load.js';
import { rng } from '../test/matching/random-commands.js';
import { numberOption } from './support/options.js';

const batch = numberOption('batch', 8);
const batches = numberOption('batches', 2_000);
const repeat = numberOption('repeat', 5);
const market = tradingMarkets(loadReferenceData(DEFAULT_REFERENCE_FILE), DEFAULT_FEES).get('btcuah')!;
const MID = 1_500_000;
const TICK = 1_000;

/** An engine with `depth` levels per side (two orders each), away from the mid price. */
function deepEngine(depth: number): { engine: MatchingEngine; nextId: number } {
  const engine = new MatchingEngine(market.spec);
  let id = 0;
  for (let level = 1; level <= depth; level += 1) {
    for (let k = 0; k < 2; k += 1) {
      const time = id;
      engine.apply({
        type: 'limit',
        id: ++id,
        account: `m${k}`,
        side: 'buy',
        price: BigInt(MID - 10 * TICK - level * TICK),
        amount: 10_000n,
        time,
      });
      engine.apply({
        type: 'limit',
        id: ++id,
        account: `m${k}`,
        side: 'sell',
        price: BigInt(MID + 10 * TICK + level * TICK),
        amount: 10_000n,
        time,
      });
    }
  }
  return { engine, nextId: id };
}

/** Crossing and resting limit orders within ten ticks of the mid price (seeded). */
function commands(count: number, firstId: number): Command[] {
  const random = rng(7);
  const out: Command[] = [];
  for (let i = 0; i < count; i += 1) {
    const side = random() < 0.5 ? 'buy' : 'sell';
    const price = BigInt(MID + Math.floor((random() - 0.5) * 20) * TICK);
    out.push({
      type: 'limit',
      id: firstId + i + 1,
      account: `t${i % 7}`,
      side,
      price,
      amount: 5_000n,
      time: i,
    });
  }
  return out;
}

type Follow = (engine: MatchingEngine) => void;

function cpuMicros(): number {
  const usage = process.cpuUsage();
  return usage.user + usage.system;
}

/** µs of CPU per batch for the engine's work plus `follow` after each batch. */
function run(depth: number, follow: (engine: MatchingEngine) => Follow): number {
  const { engine, nextId } = deepEngine(depth);
  const stream = commands(batch * batches, nextId);
  const after = follow(engine);
  const started = cpuMicros();
  for (let b = 0; b < batches; b += 1) {
    for (let i = b * batch; i < (b + 1) * batch; i += 1) engine.apply(stream[i]!);
    after(engine);
  }
  return (cpuMicros() - started) / batches;
}

const strategies: Record<string, (engine: MatchingEngine) => Follow> = {
  'engine only': () => () => {},
  'whole copy (before)': () => (engine) => {
    captureView(engine);
  },
  'changed levels (now)': (engine) => {
    engine.followLevels();
    const stats = new LevelBook(captureView(engine));
    const feed = new GroupedLevels(market, captureView(engine));
    return (e) => {
      const levels = e.takeChangedLevels();
      stats.apply(levels, e.lastPrice);
      feed.apply(levels);
      feed.takeDiff();
    };
  },
};

console.log(
  `btcuah, batches of ${batch} limit orders near the top, ${batches} batches, median of ${repeat}, CPU µs per batch`,
);
// Warm-up: every path compiled before the first timed run.
for (const strategy of Object.values(strategies)) run(100, strategy);
for (const depth of [100, 1_000, 10_000]) {
  const figures: string[] = [];
  for (const [name, strategy] of Object.entries(strategies)) {
    const runs: number[] = [];
    for (let r = 0; r < repeat; r += 1) runs.push(run(depth, strategy));
    runs.sort((a, b) => a - b);
    figures.push(`${name} ${runs[Math.floor(runs.length / 2)]!.toFixed(1)}`);
  }
  console.log(`  ${String(depth).padStart(6)} levels per side: ${figures.join(' | ')}`);
}
