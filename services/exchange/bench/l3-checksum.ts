/**
 * The order-by-order book's per-batch work (src/feed/l3-book.ts: applyBatch and the L3 checksum of
 * every diff) on deep levels, as a crossing market makes it: the matching engine (its real events)
 * holds `--depth` orders on each of 11 prices per side, then each batch of `--batch` commands is
 * takers that partly fill the first order of the best level and new orders that join the end of
 * a level. Prints CPU µs per batch (best and median of `--repeat` passes), in this process.
 *
 *   npx tsx bench/l3-checksum.ts [--depth 2000 --batches 2000 --batch 8 --repeat 5]
 */
import { L3Book } from '../src/feed/l3-book.js';
import { MatchingEngine } from '../src/matching/engine.js';
import type { Command, EngineEvent } from '../src/matching/types.js';
import { numberOption } from './support/options.js';

const depth = numberOption('depth', 2000);
const batches = numberOption('batches', 2000);
const batchSize = numberOption('batch', 8);
const repeat = numberOption('repeat', 5);
const LEVELS = 11;
const MID = 1_500_000n;

function pass(): number {
  const engine = new MatchingEngine({
    id: 'btcuah',
    pricePrecision: 2,
    amountPrecision: 3,
    makerFeePpm: 1_000,
    takerFeePpm: 2_000,
  });
  let id = 1;
  let time = 1_000;
  const apply = (command: Command): EngineEvent[] => {
    const result = engine.apply(command);
    return result.ok ? [...result.events] : [];
  };
  for (let level = 1; level <= LEVELS; level += 1)
    for (let i = 0; i < depth; i += 1) {
      const step = BigInt(level) * 100n;
      apply({
        type: 'limit',
        id: id++,
        account: 'maker',
        side: 'sell',
        price: MID + step,
        amount: 1_000n,
        time: time++,
      });
      apply({
        type: 'limit',
        id: id++,
        account: 'maker',
        side: 'buy',
        price: MID - step,
        amount: 1_000n,
        time: time++,
      });
    }
  const book = new L3Book(engine.liveOrders());
  // The batches' events are made first: only the book's work is timed.
  const work: EngineEvent[][] = [];
  for (let b = 0; b < batches; b += 1) {
    const events: EngineEvent[] = [];
    for (let i = 0; i < batchSize; i += 1) {
      const buy = (b + i) % 2 === 0;
      const side = buy ? 'buy' : 'sell';
      const best = buy ? MID + 100n : MID - 100n;
      if (i % 2 === 0)
        events.push(
          ...apply({
            type: 'limit',
            id: id++,
            account: 'taker',
            side,
            price: best,
            amount: 300n,
            time: time++,
          }),
        );
      else
        events.push(
          ...apply({
            type: 'limit',
            id: id++,
            account: 'maker',
            side: buy ? 'sell' : 'buy',
            price: best,
            amount: 300n,
            time: time++,
          }),
        );
    }
    work.push(events);
  }
  const start = process.cpuUsage();
  let sum = 0;
  for (const events of work) {
    book.applyBatch(events);
    sum += book.checksum();
  }
  const used = process.cpuUsage(start);
  if (sum < 0) console.log(sum);
  return (used.user + used.system) / batches;
}

const results: number[] = [];
for (let r = 0; r < repeat; r += 1) results.push(pass());
const sorted = [...results].sort((a, b) => a - b);
console.log(
  `L3 book, ${LEVELS} levels x ${depth} orders per side, ${batches} batches of ${batchSize}: CPU per batch best ${sorted[0]!.toFixed(1)} µs, median ${sorted[Math.floor(sorted.length / 2)]!.toFixed(1)} µs (${results.map((r) => r.toFixed(1)).join(' ')})`,
);
