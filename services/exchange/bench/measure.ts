import { performance } from 'node:perf_hooks';
import type { Stream } from './streams.js';

/** One engine under test: `run` applies command i of the stream and returns -1 when refused. */
export interface Engine {
  run(stream: Stream, i: number): number;
  resting(): number;
}

/**
 * Throughput is counted per second of this process's CPU time (user + system, all threads, so GC
 * helper threads count too), and also per wall-clock second. On a machine shared with other work
 * the wall-clock figure moves by a factor of two or more from run to run while the CPU-time figure
 * stays within a few percent, so the ratios use CPU time.
 */
export interface Run {
  readonly ops: number;
  readonly seconds: number;
  readonly cpuSeconds: number;
  readonly opsPerSecond: number;
  readonly wallOpsPerSecond: number;
  /** CPU-time throughput over the last 10 % of the commands, where the deep book is deepest. */
  readonly tailOpsPerSecond: number;
  readonly refused: number;
  readonly resting: number;
  /**
   * Memory the filled book retains: used JS heap plus ArrayBuffer memory (where typed arrays keep
   * their elements, outside the JS heap) with the engine alive, minus the same after it is dropped.
   */
  readonly heapMb: number;
}

const gc = (globalThis as { gc?: () => void }).gc;

/**
 * Used JS heap plus ArrayBuffer memory, after a full GC and once V8 has finished freeing the backing
 * stores of dead ArrayBuffers, which it does on a helper thread after `gc()` returns (read at once,
 * a 16 MB buffer dropped just before was counted in some runs and not in others).
 */
function used(): number {
  settle();
  settle();
  const memory = process.memoryUsage();
  return memory.heapUsed + memory.arrayBuffers;
}
const pause = new Int32Array(new SharedArrayBuffer(4));

/**
 * A full GC, then 100 ms of sleep: V8 finishes sweeping on helper threads after `gc()` returns, and
 * that CPU time would otherwise be billed to the run that starts next (it dominated short runs).
 */
function settle(): void {
  gc?.();
  Atomics.wait(pause, 0, 0, 100);
}

/**
 * Runs the first `ops` commands of the stream on a fresh engine, after a full GC so that no garbage
 * of an earlier run is collected (and billed) during this one. Without per-command timing, whose own
 * cost (about 0.1 µs) would distort a sub-microsecond engine; see `latencies()` for p99.
 */
export function throughput(stream: Stream, ops: number, build: () => Engine): Run {
  settle();
  // The engine lives only inside `fill`, so once it returns nothing (not even an optimised frame's
  // spill slot) keeps the book alive, and the heap difference is the book's retained size.
  const run = fill(stream, ops, build);
  const heapMb = gc === undefined ? Number.NaN : (run.held - used()) / 2 ** 20;
  return { ...run.result, heapMb };
}

function fill(
  stream: Stream,
  ops: number,
  build: () => Engine,
): { result: Omit<Run, 'heapMb'>; held: number } {
  const engine = build();
  let refused = 0;
  const tailFrom = Math.floor(ops * 0.9);
  const start = performance.now();
  const cpuStart = process.cpuUsage();
  for (let i = 0; i < tailFrom; i++) if (engine.run(stream, i) < 0) refused++;
  const cpuTail = process.cpuUsage();
  for (let i = tailFrom; i < ops; i++) if (engine.run(stream, i) < 0) refused++;
  const cpuEnd = process.cpuUsage();
  const end = performance.now();
  const cpu = (from: NodeJS.CpuUsage, to: NodeJS.CpuUsage) =>
    (to.user - from.user + to.system - from.system) / 1e6;
  const cpuSeconds = cpu(cpuStart, cpuEnd);
  return {
    held: used(),
    result: {
      ops,
      seconds: (end - start) / 1000,
      cpuSeconds,
      opsPerSecond: ops / cpuSeconds,
      wallOpsPerSecond: (ops / (end - start)) * 1000,
      tailOpsPerSecond: (ops - tailFrom) / cpu(cpuTail, cpuEnd),
      refused,
      resting: engine.resting(),
    },
  };
}

/**
 * p99 of the per-command wall-clock time in microseconds, from a run with performance.now() around
 * each command (so it includes the odd preemption by other processes on a loaded machine).
 */
export function p99Micros(stream: Stream, ops: number, build: () => Engine): number {
  settle();
  const engine = build();
  const latency = new Float64Array(ops);
  for (let i = 0; i < ops; i++) {
    const t0 = performance.now();
    engine.run(stream, i);
    latency[i] = performance.now() - t0;
  }
  latency.sort();
  return (latency[Math.floor(ops * 0.99)] ?? 0) * 1000;
}

/** The run with the median throughput. */
export function medianRun(runs: readonly Run[]): Run {
  const sorted = [...runs].sort((a, b) => a.opsPerSecond - b.opsPerSecond);
  return sorted[Math.floor(sorted.length / 2)]!;
}
