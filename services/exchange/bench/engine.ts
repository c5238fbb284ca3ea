/**
 * Matching engine benchmark: our engine against `nodejs-order-book` on the same seeded streams, in
 * the same process run. Not part of `npm test`.
 *
 *   npm run bench:engine -w services/exchange [-- --commands 1000000 --baseline-deep 300000 --seed 7 --only deep]
 *
 * Each engine builds its own input objects inside the timed loop (ours with bigint amounts, the
 * baseline with string ids and number sizes). The baseline's cancel and fill walk every order of the
 * price level, so on the deep stream it runs on a prefix (`--baseline-deep`, default 300,000
 * commands; `--baseline-deep 1000000` runs all of it, in minutes) and our engine's figures on that
 * same prefix are printed for the ratio, next to its full-stream figures.
 */
import { performance } from 'node:perf_hooks';
import { OrderBook, type SelfTradePreventionMode } from 'nodejs-order-book';
import { MatchingEngine } from '../src/matching/engine.js';
import type { Command } from '../src/matching/types.js';
import { accountNames as accounts, CANCEL, DEEP, generate, LIMIT, SHALLOW, type Stream } from './streams.js';

function flag(name: string, fallback: number): number {
  const at = process.argv.indexOf(`--${name}`);
  const value = at === -1 ? undefined : Number(process.argv[at + 1]);
  return value === undefined || !Number.isFinite(value) ? fallback : value;
}

const commands = flag('commands', 1_000_000);
const baselineDeep = Math.min(commands, flag('baseline-deep', 300_000));
const seed = flag('seed', 7);
const gc = (globalThis as { gc?: () => void }).gc;

interface Figures {
  readonly ops: number;
  readonly seconds: number;
  readonly opsPerSecond: number;
  /** Throughput over the last 10 % of the commands, where the deep book is deepest. */
  readonly tailOpsPerSecond: number;
  readonly p99Micros: number;
  readonly heapMb: number;
  readonly errors: number;
  readonly resting: number;
}

/** One engine under test: `run` applies command i of the stream and returns -1 when refused. */
interface Engine {
  run(stream: Stream, i: number): number;
  resting(): number;
}

/**
 * Runs the first `ops` commands on a fresh book with performance.now() around every command (p99
 * latency, throughput, and throughput over the last 10 %). With `untimedPass`, throughput is instead
 * taken from a second run on another fresh book without the per-command timer, whose own cost
 * (about 0.1 µs) would otherwise distort a sub-microsecond engine; the baseline, at tens of
 * microseconds per command, gets one pass. Heap is what the filled book retains (needs --expose-gc).
 */
function measure(stream: Stream, ops: number, build: () => Engine, untimedPass: boolean): Figures {
  let engine: Engine | undefined = build();
  let errors = 0;
  const latency = new Float64Array(ops);
  const tailFrom = Math.floor(ops * 0.9);
  let start = performance.now();
  let tailStart = start;
  for (let i = 0; i < ops; i++) {
    if (i === tailFrom) tailStart = performance.now();
    const t0 = performance.now();
    if (engine.run(stream, i) < 0) errors++;
    latency[i] = performance.now() - t0;
  }
  let end = performance.now();
  const resting = engine.resting();
  // Retained heap of the book: used heap with the engine alive minus used heap once it is dropped.
  gc?.();
  const held = process.memoryUsage().heapUsed;
  engine = undefined;
  gc?.();
  const heapMb = gc === undefined ? Number.NaN : (held - process.memoryUsage().heapUsed) / 2 ** 20;
  if (untimedPass) {
    const untimed = build();
    start = performance.now();
    for (let i = 0; i < tailFrom; i++) untimed.run(stream, i);
    tailStart = performance.now();
    for (let i = tailFrom; i < ops; i++) untimed.run(stream, i);
    end = performance.now();
  }
  latency.sort();
  const seconds = (end - start) / 1000;
  return {
    ops,
    seconds,
    opsPerSecond: ops / seconds,
    tailOpsPerSecond: ((ops - tailFrom) / (end - tailStart)) * 1000,
    p99Micros: (latency[Math.floor(ops * 0.99)] ?? 0) * 1000,
    heapMb,
    errors,
    resting,
  };
}

const BUDGET = 10n ** 18n;

function ours(): Engine {
  const engine = new MatchingEngine({ id: 'benchusd', pricePrecision: 2, amountPrecision: 4 });
  const run = (s: Stream, i: number): number => {
    const kind = s.kind[i]!;
    let cmd: Command;
    if (kind === CANCEL) cmd = { type: 'cancel', id: s.id[i]!, time: i };
    else if (kind === LIMIT) {
      cmd = {
        type: 'limit',
        id: s.id[i]!,
        account: accounts[s.account[i]!]!,
        side: s.side[i] === 0 ? 'buy' : 'sell',
        price: BigInt(s.price[i]!),
        amount: BigInt(s.amount[i]!),
        time: i,
      };
    } else {
      cmd = {
        type: 'market',
        id: s.id[i]!,
        account: accounts[s.account[i]!]!,
        side: s.side[i] === 0 ? 'buy' : 'sell',
        amount: BigInt(s.amount[i]!),
        budget: BUDGET,
        time: i,
      };
    }
    return engine.apply(cmd).ok ? 0 : -1;
  };
  return { run, resting: () => engine.openOrders };
}

/** The baseline's "expire maker" self-trade prevention is our policy (cancel the resting order). */
function stp(s: Stream, i: number): { accountId: string; stpMode: SelfTradePreventionMode } {
  return { accountId: accounts[s.account[i]!]!, stpMode: 'EXPIRE_MAKER' as SelfTradePreventionMode };
}

function baseline(): Engine {
  const book = new OrderBook();
  let resting = 0;
  const run = (s: Stream, i: number): number => {
    const kind = s.kind[i]!;
    // The baseline's enums are plain strings at run time.
    const side = (s.side[i] === 0 ? 'buy' : 'sell') as Parameters<OrderBook['market']>[0]['side'];
    if (kind === CANCEL) {
      const cancelled = book.cancel(String(s.id[i]!));
      if (cancelled === undefined) return -1;
      resting--;
      return 0;
    }
    const result =
      kind === LIMIT
        ? book.limit({ id: String(s.id[i]!), side, size: s.amount[i]!, price: s.price[i]!, ...stp(s, i) })
        : book.market({ side, size: s.amount[i]!, ...stp(s, i) });
    if (result.err !== null) return -1;
    if (kind === LIMIT && result.quantityLeft > 0) resting++;
    resting -= result.done.length - (kind === LIMIT && result.quantityLeft === 0 ? 1 : 0);
    return 0;
  };
  return { run, resting: () => resting };
}

function line(label: string, f: Figures): string {
  return (
    `  ${label.padEnd(34)} ${String(f.ops).padStart(9)} cmds ${f.seconds.toFixed(2).padStart(7)} s ` +
    `${Math.round(f.opsPerSecond).toLocaleString('en-US').padStart(11)} ops/s (last 10%: ${Math.round(f.tailOpsPerSecond).toLocaleString('en-US')})  p99 ${f.p99Micros.toFixed(2).padStart(8)} µs  ` +
    `heap ${f.heapMb.toFixed(0).padStart(5)} MB  refused ${f.errors}  resting ~${f.resting}`
  );
}

function ratio(ours: Figures, base: Figures): string {
  return (
    `  ratio: ${(ours.opsPerSecond / base.opsPerSecond).toFixed(1)}x ops/s ` +
    `(last 10%: ${(ours.tailOpsPerSecond / base.tailOpsPerSecond).toFixed(1)}x), ` +
    `p99 ${(base.p99Micros / ours.p99Micros).toFixed(1)}x lower, heap ${ours.heapMb >= 1 && base.heapMb >= 1 ? `${(base.heapMb / ours.heapMb).toFixed(1)}x smaller` : 'n/a (under 1 MB)'}`
  );
}

console.log(
  `engine benchmark: ${commands} commands per stream, seed ${seed}, node ${process.version}` +
    (gc === undefined ? ' (run with --expose-gc for settled heap figures)' : ''),
);
const only = process.argv.indexOf('--only');
const shapes = [SHALLOW, DEEP].filter((s) => only === -1 || process.argv[only + 1] === s.name);
for (const shape of shapes) {
  const stream = generate(shape, commands, seed);
  const prefix = shape === DEEP ? baselineDeep : commands;
  console.log(`\n${shape.name} stream`);
  // Warm-up so that neither engine is measured while the JIT is still compiling its hot paths.
  const warm = generate(shape, 50_000, seed + 1);
  measure(warm, warm.length, ours, true);
  measure(warm, Math.min(warm.length, 20_000), baseline, false);
  const oursFull = measure(stream, commands, ours, true);
  console.log(line('ours (full stream)', oursFull));
  const oursPrefix = prefix === commands ? oursFull : measure(stream, prefix, ours, true);
  if (prefix !== commands) console.log(line(`ours (first ${prefix})`, oursPrefix));
  const base = measure(stream, prefix, baseline, false);
  console.log(line(prefix === commands ? 'nodejs-order-book' : `nodejs-order-book (first ${prefix})`, base));
  console.log(ratio(oursPrefix, base));
}
