/**
 * Our engine on the exchange-core-shaped stream (exchange-core-stream.ts; issue 46), printed like
 * exchange-core's own table: throughput on the whole stream, then latency percentiles at a constant
 * arrival rate of 125k and 1M commands per second and at the maximum rate. Run by `bench:engine`
 * after its other streams, or alone:
 *
 *   npm run bench:engine -w services/exchange -- --only exchange-core [--ec-commands 3000000 --ec-latency-commands 1000000]
 *
 * The anchor is exchange-core's published figure (5M operations/s on one book, a 2010 Xeon X5690;
 * p99 4 µs at 1M ops/s, 42 µs at 5M), which cannot be measured here (no JVM on these machines), so
 * the ratio printed is against that figure, beside our shallow stream's ops/s of the same run.
 *
 * Latency without coordinated omission: command i is scheduled at start + i / rate; the loop spins
 * until that time, runs it, and counts its latency from the scheduled time, so a stall delays every
 * command behind it and they all count it (a loop that measured each command from when it started
 * would hide the queue). At the maximum rate every command is scheduled at the start, so latency
 * there is the time until its completion minus the previous command's: each command alone.
 */
import { performance } from 'node:perf_hooks';
import { MatchingEngine } from '../src/matching/engine.js';
import type { Command } from '../src/matching/types.js';
import { CANCEL, type ExchangeCoreMix, generateExchangeCore, IOC, MOVE } from './exchange-core-stream.js';
import { type Engine, medianRun, type Run, throughput } from './measure.js';
import { accountNames, type Stream } from './streams.js';

/** Our engine fed from the stream's columns; -1 when a command is refused. */
function engineFor(): Engine {
  const engine = new MatchingEngine({ id: 'benchusd', pricePrecision: 2, amountPrecision: 4 });
  const run = (s: Stream, i: number): number => {
    const kind = s.kind[i]!;
    let command: Command;
    if (kind === MOVE) command = { type: 'amend', id: s.id[i]!, price: BigInt(s.price[i]!), time: i };
    else if (kind === CANCEL) command = { type: 'cancel', id: s.id[i]!, time: i };
    else
      command = {
        type: 'limit',
        id: s.id[i]!,
        account: accountNames[s.account[i]!]!,
        side: s.side[i] === 0 ? 'buy' : 'sell',
        price: BigInt(s.price[i]!),
        amount: BigInt(s.amount[i]!),
        tif: kind === IOC ? 'ioc' : 'gtc',
        time: i,
      };
    return engine.apply(command).ok ? 0 : -1;
  };
  return { run, resting: () => engine.openOrders };
}

export interface LatencyRow {
  readonly rate: number | 'max';
  readonly achieved: number;
  readonly p50: number;
  readonly p90: number;
  readonly p99: number;
  readonly p999: number;
  readonly max: number;
}

/** Percentiles in µs of `ops` commands at a constant arrival `rate` per second (or back to back). */
function latencyAt(stream: Stream, ops: number, rate: number | 'max', engine: Engine): LatencyRow {
  const latency = new Float64Array(ops);
  const interval = rate === 'max' ? 0 : 1000 / rate; // ms
  const start = performance.now();
  let previous = start;
  for (let i = 0; i < ops; i++) {
    const due = start + i * interval;
    let now = performance.now();
    while (now < due) now = performance.now();
    engine.run(stream, i);
    const done = performance.now();
    latency[i] = rate === 'max' ? done - previous : done - due;
    previous = done;
  }
  const elapsed = (performance.now() - start) / 1000;
  latency.sort();
  const at = (q: number) => latency[Math.min(ops - 1, Math.floor(ops * q))]! * 1000;
  return {
    rate,
    achieved: ops / elapsed,
    p50: at(0.5),
    p90: at(0.9),
    p99: at(0.99),
    p999: at(0.999),
    max: latency[ops - 1]! * 1000,
  };
}

/** Engines kept alive for the process's life (see the warm-up in `exchangeCoreSection`). */
const keepAlive: Engine[] = [];

const int = (n: number) => Math.round(n).toLocaleString('en-US');
const us = (n: number) => `${n < 10 ? n.toFixed(2) : n.toFixed(1)} µs`;

/** Runs the section; `shallowOpsPerSecond`: our shallow stream's figure of the same run, if any. */
export function exchangeCoreSection(options: {
  commands: number;
  latencyCommands: number;
  seed: number;
  repeat: number;
  shallowOpsPerSecond?: number;
}): void {
  const { commands, seed } = options;
  const generated = generateExchangeCore(commands, seed);
  const mix: ExchangeCoreMix = generated.mix;
  const pct = (n: number) => `${((100 * n) / commands).toFixed(1)} %`;
  console.log(
    `\nexchange-core stream: ${int(commands)} commands, seed ${seed}: GTC ${pct(mix.gtc)}, IOC ${pct(mix.ioc)}, ` +
      `cancel ${pct(mix.cancel)}, move ${pct(mix.move)}; trading ${pct(mix.trading)}; ` +
      `${mix.resting} resting orders over ${mix.levels} price levels at the end`,
  );
  const warm = generateExchangeCore(200_000, seed + 1).stream;
  const keep = engineFor();
  for (let i = 0; i < warm.length; i++) keep.run(warm, i);
  // Held by the module, not by this function's frame: once this function is optimised, a local that
  // is not read again is dead, the forced GC before each run collects the last engine, V8 drops the
  // engine classes' field maps (held weakly) and deoptimises every function built on them ("weak
  // objects"), so each run started interpreted (about 1.1M against 2.5M ops/s in a fresh process).
  keepAlive.push(keep);
  throughput(warm, warm.length, engineFor);
  const runs: Run[] = [];
  for (let r = 0; r < options.repeat; r++) runs.push(throughput(generated.stream, commands, engineFor));
  const run = medianRun(runs);
  const anchor = 5_000_000;
  console.log(
    `  ours ${int(run.opsPerSecond)} ops/s per CPU second (wall clock ${int(run.wallOpsPerSecond)}; median of ${runs.length}), ` +
      `refused ${run.refused}, heap ${run.heapMb.toFixed(0)} MB: ${(run.opsPerSecond / anchor).toFixed(2)}x exchange-core's 5M (published, not measured here)` +
      (options.shallowOpsPerSecond
        ? `; ${(run.opsPerSecond / options.shallowOpsPerSecond).toFixed(2)}x our shallow stream's ops/s of this run`
        : ''),
  );
  const span = Math.min(commands, options.latencyCommands);
  console.log(`  latency from the scheduled time, first ${int(span)} commands, a fresh engine per rate:`);
  console.log('  rate          achieved/s        p50        p90        p99      p99.9        max');
  for (const rate of [125_000, 1_000_000, 'max'] as const) {
    const ops = rate === 125_000 ? Math.min(span, 500_000) : span;
    // Warm the fresh engine's code paths on another stream first (a few thousand commands).
    const engine = engineFor();
    for (let i = 0; i < 5_000; i++) engine.run(warm, i);
    const fresh = engineFor();
    const row = latencyAt(generated.stream, ops, rate, fresh);
    console.log(
      `  ${(rate === 'max' ? 'max' : int(rate)).padEnd(12)} ${int(row.achieved).padStart(11)} ${us(row.p50).padStart(10)} ` +
        `${us(row.p90).padStart(10)} ${us(row.p99).padStart(10)} ${us(row.p999).padStart(10)} ${us(row.max).padStart(10)}` +
        (rate === 1_000_000 ? '   (exchange-core: p99 4 µs at 1M)' : ''),
    );
  }
}
