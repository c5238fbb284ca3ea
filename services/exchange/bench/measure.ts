import { performance } from 'node:perf_hooks';
import type { Stream } from './streams.js';

/** One engine under test: `run` applies command i of the stream and returns -1 when refused. */
export interface Engine {
  run(stream: Stream, i: number): number;
  resting(): number;
}

export interface Run {
  readonly ops: number;
  readonly seconds: number;
  readonly opsPerSecond: number;
  /** Throughput over the last 10 % of the commands, where the deep book is deepest. */
  readonly tailOpsPerSecond: number;
  readonly refused: number;
  readonly resting: number;
  /** Heap the filled book retains: used heap with the engine alive minus after it is dropped. */
  readonly heapMb: number;
}

const gc = (globalThis as { gc?: () => void }).gc;

/**
 * Runs the first `ops` commands of the stream on a fresh engine, after a full GC so that no garbage
 * of an earlier run is collected (and billed) during this one. Without per-command timing, whose own
 * cost (about 0.1 µs) would distort a sub-microsecond engine; see `latencies()` for p99.
 */
export function throughput(stream: Stream, ops: number, build: () => Engine): Run {
  gc?.();
  // The engine lives only inside `fill`, so once it returns nothing (not even an optimised frame's
  // spill slot) keeps the book alive, and the heap difference is the book's retained size.
  const run = fill(stream, ops, build);
  gc?.();
  const heapMb = gc === undefined ? Number.NaN : (run.held - process.memoryUsage().heapUsed) / 2 ** 20;
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
  for (let i = 0; i < tailFrom; i++) if (engine.run(stream, i) < 0) refused++;
  const tailStart = performance.now();
  for (let i = tailFrom; i < ops; i++) if (engine.run(stream, i) < 0) refused++;
  const end = performance.now();
  gc?.();
  return {
    held: process.memoryUsage().heapUsed,
    result: {
      ops,
      seconds: (end - start) / 1000,
      opsPerSecond: (ops / (end - start)) * 1000,
      tailOpsPerSecond: ((ops - tailFrom) / (end - tailStart)) * 1000,
      refused,
      resting: engine.resting(),
    },
  };
}

/** p99 of the per-command time in microseconds, from a run with performance.now() around each command. */
export function p99Micros(stream: Stream, ops: number, build: () => Engine): number {
  gc?.();
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
