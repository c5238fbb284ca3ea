/**
 * Matching engine benchmark: our engine against `nodejs-order-book` on the same seeded streams, in
 * the same process run. Not part of `npm test`.
 *
 *   npm run bench:engine -w services/exchange [-- --commands N --baseline-deep N --repeat R --seed S --only deep|shallow|exchange-core --levels N]
 *
 * After the shallow and deep streams it runs the exchange-core-shaped stream (exchange-core.ts,
 * issue 46: `--ec-commands` 3,000,000, latency over `--ec-latency-commands` 1,000,000).
 *
 * Each engine builds its own input objects inside the timed loop (ours with bigint amounts, the
 * baseline with string ids and number sizes). Throughput is per second of process CPU time (see
 * measure.ts), the median of `--repeat` runs (default 3) alternating between the engines. Both
 * engines run every command of both streams by default, so the printed ratios are on the full
 * streams; the baseline's cancel and fill walk every order of the price level, so its deep run takes
 * about 60 to 70 s of CPU each (the whole bench about 5 minutes). `--baseline-deep N` runs the
 * baseline on the first N deep commands only (our engine is then also measured on that prefix and the
 * ratio is on it). p99 latency is measured in one more run per engine over the same commands
 * (`--p99-commands N` to shorten it).
 *
 * Each stream's realised mix (limit / cancel / market commands) is printed with it, and each run's
 * number of refused commands (0: both engines accept every command of both streams).
 *
 * `--levels N` (default 0: off) runs our engine as the order writer does: recording the book levels
 * the commands change (`followLevels`) and taking them every N commands (one batch's worth, for
 * market data and the live feed), so its figures include that cost.
 *
 * One instance of each engine, fed a few thousand commands, stays alive for the whole run. Without
 * it, the forced GC before each measured run (see measure.ts) collected the last instance of the
 * engine's classes, V8 dropped their hidden classes and with them every optimised function that
 * depended on them, and the next run spent its first tens of thousands of commands interpreted and
 * re-optimised: about 0.15 s of CPU for our engine (a fifth of a deep run), noise for the baseline. A
 * long-running service never drops its engines, so this measures the steady state of both alike.
 */
import { OrderBook, type SelfTradePreventionMode } from 'nodejs-order-book';
import { MatchingEngine } from '../src/matching/engine.js';
import type { Command } from '../src/matching/types.js';
import { exchangeCoreSection } from './exchange-core.js';
import { type Engine, medianRun, p99Micros, type Run, throughput } from './measure.js';
import {
  AMEND,
  accountNames as accounts,
  CANCEL,
  DEEP,
  generate,
  LIMIT,
  mixOf,
  SHALLOW,
  type Stream,
  TIFS,
} from './streams.js';

function flag(name: string, fallback: number): number {
  const at = process.argv.indexOf(`--${name}`);
  const value = at === -1 ? undefined : Number(process.argv[at + 1]);
  return value === undefined || !Number.isFinite(value) ? fallback : value;
}

const commands = flag('commands', 1_000_000);
const baselineDeep = Math.min(commands, flag('baseline-deep', commands));
const p99Commands = flag('p99-commands', commands);
const seed = flag('seed', 7);
const repeat = Math.max(1, flag('repeat', 3));
const gc = (globalThis as { gc?: () => void }).gc;
// Commands per taking of the changed levels (0: levels not followed, the engine alone).
const levelsEvery = Math.max(0, flag('levels', 0));

const BUDGET = 10n ** 18n;

function ours(): Engine {
  const engine = new MatchingEngine({ id: 'benchusd', pricePrecision: 2, amountPrecision: 4 });
  if (levelsEvery > 0) engine.followLevels();
  const run = (s: Stream, i: number): number => {
    if (levelsEvery > 0 && i % levelsEvery === 0) engine.takeChangedLevels();
    const kind = s.kind[i]!;
    let cmd: Command;
    if (kind === CANCEL) cmd = { type: 'cancel', id: s.id[i]!, time: i };
    else if (kind === AMEND) {
      cmd =
        s.amount[i] !== 0
          ? { type: 'amend', id: s.id[i]!, amount: BigInt(s.amount[i]!), time: i }
          : { type: 'amend', id: s.id[i]!, price: BigInt(s.price[i]!), time: i };
    } else if (kind === LIMIT) {
      const tif = s.tif[i]!;
      // Literals, not a spread (a spread builds each object on a slow path and gives it a shape of its
      // own): today's shape, and the same with `tif` last for an IOC/FOK limit of the variant.
      cmd =
        tif === 0
          ? {
              type: 'limit',
              id: s.id[i]!,
              account: accounts[s.account[i]!]!,
              side: s.side[i] === 0 ? 'buy' : 'sell',
              price: BigInt(s.price[i]!),
              amount: BigInt(s.amount[i]!),
              time: i,
            }
          : {
              type: 'limit',
              id: s.id[i]!,
              account: accounts[s.account[i]!]!,
              side: s.side[i] === 0 ? 'buy' : 'sell',
              price: BigInt(s.price[i]!),
              amount: BigInt(s.amount[i]!),
              time: i,
              tif: TIFS[tif]!,
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
const EXPIRE_MAKER = 'EXPIRE_MAKER' as SelfTradePreventionMode;

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
    const accountId = accounts[s.account[i]!]!;
    const size = s.amount[i]!;
    const result =
      kind === LIMIT
        ? book.limit({
            id: String(s.id[i]!),
            side,
            size,
            price: s.price[i]!,
            accountId,
            stpMode: EXPIRE_MAKER,
          })
        : book.market({ side, size, accountId, stpMode: EXPIRE_MAKER });
    if (result.err !== null) return -1;
    if (kind === LIMIT && result.quantityLeft > 0) resting++;
    resting -= result.done.length - (kind === LIMIT && result.quantityLeft === 0 ? 1 : 0);
    return 0;
  };
  return { run, resting: () => resting };
}

const int = (n: number) => Math.round(n).toLocaleString('en-US');
const times = (x: number) => `${x.toFixed(x < 10 ? 2 : 1)}x`;

function line(label: string, r: Run, p99: number, runs: number): string {
  return (
    `  ${label.padEnd(24)} ${String(r.ops).padStart(8)} cmds ${r.cpuSeconds.toFixed(2).padStart(7)} s CPU ` +
    `${int(r.opsPerSecond).padStart(10)} ops/s (last 10%: ${int(r.tailOpsPerSecond)}; wall clock ${int(r.wallOpsPerSecond)})  ` +
    `p99 ${p99.toFixed(2).padStart(7)} µs  ` +
    `heap ${r.heapMb.toFixed(0).padStart(4)} MB  refused ${r.refused}  resting ~${r.resting}` +
    (runs > 1 ? `  [median of ${runs}]` : '')
  );
}

console.log(
  `engine benchmark: ${commands} commands per stream, seed ${seed}, ${repeat} alternating runs per engine, ` +
    `node ${process.version}` +
    (levelsEvery > 0 ? `, ours following its book levels (taken every ${levelsEvery} commands)` : '') +
    (gc === undefined ? ' (run with --expose-gc for heap figures)' : ''),
);
const only = process.argv.indexOf('--only');
const shapes = [SHALLOW, DEEP].filter((s) => only === -1 || process.argv[only + 1] === s.name);
/** Our engine's ops/s on the shallow stream, printed beside the exchange-core stream's. */
let shallowOpsPerSecond: number | undefined;
const pct = (n: number, of: number) => `${((100 * n) / of).toFixed(1)} %`;
/** Engines kept alive until the end (see the header). */
const keepAlive: Engine[] = [];
for (const shape of shapes) {
  const stream = generate(shape, commands, seed);
  // The issue 43 variant: 10 % amends and IOC/FOK limits, measured on our engine beside the plain stream.
  const variant = generate(shape, commands, seed, true);
  const prefix = shape === DEEP ? baselineDeep : commands;
  const mix = mixOf(stream);
  console.log(
    `\n${shape.name} stream: ${int(mix.limit)} limit (${pct(mix.limit, commands)}), ` +
      `${int(mix.cancel)} cancel (${pct(mix.cancel, commands)}), ${int(mix.market)} market (${pct(mix.market, commands)})`,
  );
  // Warm-up so that neither engine is measured while the JIT is still compiling its hot paths.
  const warm = generate(shape, 300_000, seed + 1);
  for (const build of [ours, baseline]) {
    const engine = build();
    for (let i = 0; i < 5_000; i++) engine.run(warm, i);
    keepAlive.push(engine);
  }
  throughput(warm, warm.length, ours);
  throughput(generate(shape, 300_000, seed + 1, true), 300_000, ours);
  throughput(warm, 30_000, baseline);
  // Alternate the engines so that load from other processes falls on both alike; report medians.
  const mineRuns: Run[] = [];
  const mineOnPrefix: Run[] = [];
  const baseRuns: Run[] = [];
  const variantRuns: Run[] = [];
  for (let r = 0; r < repeat; r++) {
    mineRuns.push(throughput(stream, commands, ours));
    variantRuns.push(throughput(variant, commands, ours));
    if (prefix !== commands) mineOnPrefix.push(throughput(stream, prefix, ours));
    baseRuns.push(throughput(stream, prefix, baseline));
  }
  const mine = medianRun(mineRuns);
  const minePrefix = prefix === commands ? mine : medianRun(mineOnPrefix);
  const base = medianRun(baseRuns);
  // p99 of both over the same commands.
  const span = Math.min(prefix, p99Commands);
  const mineP99 = p99Micros(stream, span, ours);
  const baseP99 = p99Micros(stream, span, baseline);
  console.log(
    line('ours', mine, span === commands ? mineP99 : p99Micros(stream, commands, ours), mineRuns.length),
  );
  if (prefix !== commands)
    console.log(line(`ours, first ${prefix}`, minePrefix, mineP99, mineOnPrefix.length));
  if (shape === SHALLOW) shallowOpsPerSecond = mine.opsPerSecond;
  const variantMix = mixOf(variant);
  const withOptions = medianRun(variantRuns);
  console.log(line('ours, amends + IOC/FOK', withOptions, Number.NaN, variantRuns.length));
  console.log(
    `  the variant (${pct(variantMix.amend, commands)} amends, 10 % IOC and 10 % FOK of ${int(variantMix.limit)} limits, ` +
      `${int(variantMix.cancel)} cancels, ${int(variantMix.market)} markets): ` +
      `${times(withOptions.opsPerSecond / mine.opsPerSecond)} of the plain stream's ops/s (target >= 0.9x)`,
  );
  const baseLabel = prefix === commands ? 'nodejs-order-book' : `baseline, first ${prefix}`;
  console.log(line(baseLabel, base, baseP99, baseRuns.length));
  const heap = minePrefix.heapMb >= 1 && base.heapMb >= 1 ? times(base.heapMb / minePrefix.heapMb) : 'n/a';
  console.log(
    `  ratios on the same ${prefix} commands${prefix === commands ? ' (the full stream)' : ''}: ` +
      `ops/s ${times(minePrefix.opsPerSecond / base.opsPerSecond)} ` +
      `(last 10%: ${times(minePrefix.tailOpsPerSecond / base.tailOpsPerSecond)}), ` +
      `p99 ${times(baseP99 / mineP99)} lower${span < prefix ? ` (p99s over the first ${span})` : ''}, heap ${heap} smaller`,
  );
}
if (only === -1 || process.argv[only + 1] === 'exchange-core') {
  exchangeCoreSection({
    commands: flag('ec-commands', 3_000_000),
    latencyCommands: flag('ec-latency-commands', 1_000_000),
    seed,
    repeat,
    ...(shallowOpsPerSecond === undefined ? {} : { shallowOpsPerSecond }),
  });
}
console.log(`\n(${keepAlive.length} warm engines kept alive)`);
