/**
 * Matching engine benchmark: our engine against `nodejs-order-book` on the same seeded streams, in
 * the same process run. Not part of `npm test`.
 *
 *   npm run bench:engine -w services/exchange [-- --commands N --baseline-deep N --repeat R --seed S --only deep|shallow|exchange-core --levels N --one-process]
 *
 * After the shallow and deep streams it runs the exchange-core-shaped stream (exchange-core.ts,
 * issue 46: `--ec-commands` 3,000,000, latency over `--ec-latency-commands` 1,000,000).
 *
 * Each engine builds its own input objects inside the timed loop (ours with bigint amounts, the
 * baseline with string ids and number sizes; engine-adapters.ts). Throughput is per second of process
 * CPU time (see measure.ts). A stream is measured in `--repeat` rounds (default 3); each round runs
 * ours, ours on the variant and the baseline one after the other (the order reversed every other
 * round), each in a child process of its own (engine-job.ts: only that stream's command shapes reach
 * the engine's call sites, as in a service; `--one-process` runs them all in this process instead,
 * as the bench did before). The ratios printed are the medians of the rounds' own ratios (each round
 * its ours against its baseline, minutes apart at most), with the load average beside them. Both
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
 * One instance of each engine, fed a few thousand commands, stays alive for the whole job. Without
 * it, the forced GC before each measured run (see measure.ts) collected the last instance of the
 * engine's classes, V8 dropped their hidden classes and with them every optimised function that
 * depended on them, and the next run spent its first tens of thousands of commands interpreted and
 * re-optimised: about 0.15 s of CPU for our engine (a fifth of a deep run), noise for the baseline. A
 * long-running service never drops its engines, so this measures the steady state of both alike.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { type JobInput, type JobResult, runInChild, runJob, serveChild } from './engine-job.js';
import { exchangeCoreSection } from './exchange-core.js';
import { medianRun, type Run } from './measure.js';
import { DEEP, generate, mixOf, SHALLOW } from './streams.js';

function flag(name: string, fallback: number): number {
  const at = process.argv.indexOf(`--${name}`);
  const value = at === -1 ? undefined : Number(process.argv[at + 1]);
  return value === undefined || !Number.isFinite(value) ? fallback : value;
}

type SectionOptions = Parameters<typeof exchangeCoreSection>[0];

if (process.argv.includes('--child'))
  serveChild({ 'exchange-core': (o) => exchangeCoreSection(o as SectionOptions) });
else await main();

async function main(): Promise<void> {
  const commands = flag('commands', 1_000_000);
  const baselineDeep = Math.min(commands, flag('baseline-deep', commands));
  const p99Commands = flag('p99-commands', commands);
  const seed = flag('seed', 7);
  const repeat = Math.max(1, flag('repeat', 3));
  const gc = (globalThis as { gc?: () => void }).gc;
  // Commands per taking of the changed levels (0: levels not followed, the engine alone).
  const levelsEvery = Math.max(0, flag('levels', 0));
  const oneProcess = process.argv.includes('--one-process');
  const script = fileURLToPath(import.meta.url);
  const run = (input: JobInput): Promise<JobResult> =>
    oneProcess ? Promise.resolve(runJob(input)) : runInChild<JobResult>(script, { kind: 'job', input });

  console.log(
    `engine benchmark: ${commands} commands per stream, seed ${seed}, ${repeat} rounds, ` +
      (oneProcess ? 'every job in this process' : 'each engine in a child process of its own per round') +
      `, node ${process.version}` +
      (levelsEvery > 0 ? `, ours following its book levels (taken every ${levelsEvery} commands)` : '') +
      (gc === undefined ? ' (run with --expose-gc for heap figures)' : ''),
  );
  const only = process.argv.indexOf('--only');
  const shapes = [SHALLOW, DEEP].filter((s) => only === -1 || process.argv[only + 1] === s.name);
  /** Our engine's ops/s on the shallow stream, printed beside the exchange-core stream's. */
  let shallowOpsPerSecond: number | undefined;
  for (const shape of shapes) {
    const stream = generate(shape, commands, seed);
    // The issue 43 variant: 10 % amends and IOC/FOK limits, measured on our engine beside the plain stream.
    const variant = generate(shape, commands, seed, true);
    const warm = generate(shape, 300_000, seed + 1);
    const warmVariant = generate(shape, 300_000, seed + 1, true);
    const prefix = shape === DEEP ? baselineDeep : commands;
    const span = Math.min(prefix, p99Commands);
    const mix = mixOf(stream);
    console.log(
      `\n${shape.name} stream: ${int(mix.limit)} limit (${pct(mix.limit, commands)}), ` +
        `${int(mix.cancel)} cancel (${pct(mix.cancel, commands)}), ${int(mix.market)} market (${pct(mix.market, commands)})`,
    );
    const mine: Run[] = [];
    const minePrefix: Run[] = [];
    const variants: Run[] = [];
    const bases: Run[] = [];
    const ratios: number[] = [];
    const tailRatios: number[] = [];
    const variantRatios: number[] = [];
    let mineP99 = Number.NaN;
    let baseP99 = Number.NaN;
    for (let r = 0; r < repeat; r++) {
      const last = r === repeat - 1;
      const loadBefore = load();
      const jobs = {
        ours: () =>
          run({
            job: {
              engine: 'ours',
              runs: prefix === commands ? [commands] : [commands, prefix],
              p99Ops: last ? span : 0,
              levelsEvery,
            },
            stream,
            warm,
          }),
        variant: () =>
          run({
            job: { engine: 'variant', runs: [commands], p99Ops: 0, levelsEvery },
            stream: variant,
            warm: warmVariant,
          }),
        baseline: () =>
          run({
            job: { engine: 'baseline', runs: [prefix], p99Ops: last ? span : 0, levelsEvery: 0 },
            stream,
            warm,
          }),
      };
      // Alternate the order so that a drift in the machine's speed falls on both sides alike.
      const order =
        r % 2 === 0 ? (['ours', 'variant', 'baseline'] as const) : (['baseline', 'variant', 'ours'] as const);
      const results: Partial<Record<(typeof order)[number], JobResult>> = {};
      for (const name of order) results[name] = await jobs[name]();
      const mineRound = results.ours!;
      const full = mineRound.runs[0]!;
      const onPrefix = mineRound.runs[1] ?? full;
      const base = results.baseline!.runs[0]!;
      const withOptions = results.variant!.runs[0]!;
      mine.push(full);
      minePrefix.push(onPrefix);
      variants.push(withOptions);
      bases.push(base);
      ratios.push(onPrefix.opsPerSecond / base.opsPerSecond);
      tailRatios.push(onPrefix.tailOpsPerSecond / base.tailOpsPerSecond);
      variantRatios.push(withOptions.opsPerSecond / full.opsPerSecond);
      if (last) {
        mineP99 = mineRound.p99;
        baseP99 = results.baseline!.p99;
      }
      console.log(
        `  round ${r + 1} (${order.join(', ')}; load ${loadBefore} -> ${load()}): ours ${int(full.opsPerSecond)}, ` +
          `variant ${int(withOptions.opsPerSecond)} (${times(withOptions.opsPerSecond / full.opsPerSecond)}), ` +
          `baseline ${int(base.opsPerSecond)} ops/s: ${times(ratios[r]!)}`,
      );
    }
    if (shape === SHALLOW) shallowOpsPerSecond = medianRun(mine).opsPerSecond;
    console.log(line('ours', medianRun(mine), prefix === commands ? mineP99 : Number.NaN, mine.length));
    if (prefix !== commands)
      console.log(line(`ours, first ${prefix}`, medianRun(minePrefix), mineP99, minePrefix.length));
    const variantMix = mixOf(variant);
    console.log(line('ours, amends + IOC/FOK', medianRun(variants), Number.NaN, variants.length));
    console.log(
      `  the variant (${pct(variantMix.amend, commands)} amends, 10 % IOC and 10 % FOK of ${int(variantMix.limit)} limits, ` +
        `${int(variantMix.cancel)} cancels, ${int(variantMix.market)} markets): ` +
        `${times(median(variantRatios))} of the plain stream's ops/s (median of the rounds' ratios ${variantRatios.map(times).join(', ')}; target >= 0.9x)`,
    );
    const baseLabel = prefix === commands ? 'nodejs-order-book' : `baseline, first ${prefix}`;
    const base = medianRun(bases);
    console.log(line(baseLabel, base, baseP99, bases.length));
    const ourHeap = medianRun(minePrefix).heapMb;
    const heap = ourHeap >= 1 && base.heapMb >= 1 ? times(base.heapMb / ourHeap) : 'n/a';
    console.log(
      `  ratios on the same ${prefix} commands${prefix === commands ? ' (the full stream)' : ''}, medians of the rounds' ratios: ` +
        `ops/s ${times(median(ratios))} (rounds ${ratios.map(times).join(', ')}; load now ${load()}) ` +
        `(last 10%: ${times(median(tailRatios))}), ` +
        `p99 ${times(baseP99 / mineP99)} lower${span < prefix ? ` (p99s over the first ${span})` : ''}, heap ${heap} smaller`,
    );
  }
  if (only === -1 || process.argv[only + 1] === 'exchange-core') {
    const options: SectionOptions = {
      commands: flag('ec-commands', 3_000_000),
      latencyCommands: flag('ec-latency-commands', 1_000_000),
      seed,
      repeat,
      ...(shallowOpsPerSecond === undefined ? {} : { shallowOpsPerSecond }),
    };
    console.log(`\n(load average ${load()})`);
    if (oneProcess) exchangeCoreSection(options);
    else await runInChild(script, { kind: 'section', name: 'exchange-core', options });
    console.log(`(load average ${load()})`);
  }
}

function load(): string {
  return readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

function int(n: number): string {
  return Math.round(n).toLocaleString('en-US');
}

function times(x: number): string {
  return `${x.toFixed(x < 10 ? 2 : 1)}x`;
}

function pct(n: number, of: number): string {
  return `${((100 * n) / of).toFixed(1)} %`;
}

function line(label: string, r: Run, p99: number, runs: number): string {
  return (
    `  ${label.padEnd(24)} ${String(r.ops).padStart(8)} cmds ${r.cpuSeconds.toFixed(2).padStart(7)} s CPU ` +
    `${int(r.opsPerSecond).padStart(10)} ops/s (last 10%: ${int(r.tailOpsPerSecond)}; wall clock ${int(r.wallOpsPerSecond)})  ` +
    `p99 ${p99.toFixed(2).padStart(7)} µs  ` +
    `heap ${r.heapMb.toFixed(0).padStart(4)} MB  refused ${r.refused}  resting ~${r.resting}` +
    (runs > 1 ? `  [median of ${runs}]` : '')
  );
}
