/**
 * One measured job of `bench:engine`: one engine (ours on the plain stream, ours on the issue 43
 * variant, or the baseline) on one stream, warmed up first on a stream of its own kind, run either
 * in the bench's process or in a child process of its own (`runInChild`).
 *
 * Why a child process per job: V8 keeps type feedback per call site, so in one process the engine's
 * call sites (`apply`, `lockForOrder`, the event literals) see the command shapes of every stream and
 * variant measured before, and of the generator's model run; a service process sees only the order
 * path's shapes. A fresh process per job measures the engine with its own stream's shapes only, and
 * the median over several processes is not one process's JIT decisions (the plain figure was
 * bimodal between processes). The parent generates the streams and sends them over IPC, so the child
 * never runs the generator's model engine.
 */
import { fork } from 'node:child_process';
import { baseline, ours } from './engine-adapters.js';
import { type Engine, p99Micros, type Run, throughput } from './measure.js';
import type { Stream } from './streams.js';

export type EngineName = 'ours' | 'variant' | 'baseline';

export interface Job {
  readonly engine: EngineName;
  /** One throughput run over the first `n` commands of the stream per entry, in order. */
  readonly runs: readonly number[];
  /** Commands of a p99 run after the throughput runs; 0: none. */
  readonly p99Ops: number;
  /** Ours: take the changed levels every this many commands (0: levels not followed). */
  readonly levelsEvery: number;
}

export interface JobInput {
  readonly job: Job;
  readonly stream: Stream;
  /** A stream of the same kind for the warm-up (another seed). */
  readonly warm: Stream;
}

export interface JobResult {
  readonly runs: Run[];
  /** p99 per command in µs, NaN when not measured. */
  readonly p99: number;
}

/** Engines fed a few thousand commands and kept for the process's life (see engine.ts's header). */
const keepAlive: Engine[] = [];

export function runJob({ job, stream, warm }: JobInput): JobResult {
  const build = job.engine === 'baseline' ? baseline : () => ours(job.levelsEvery);
  const keep = build();
  for (let i = 0; i < 5_000; i++) keep.run(warm, i);
  keepAlive.push(keep);
  // Warm-up so that no engine is measured while the JIT is still compiling its hot paths (the
  // baseline on less: its deep runs are slow, and it warms within a few thousand commands).
  throughput(warm, job.engine === 'baseline' ? 30_000 : warm.length, build);
  const runs = job.runs.map((ops) => throughput(stream, ops, build));
  const p99 = job.p99Ops > 0 ? p99Micros(stream, job.p99Ops, build) : Number.NaN;
  return { runs, p99 };
}

/** Messages from the parent to a child: a job, or the exchange-core section's options. */
export type ChildRequest =
  | { readonly kind: 'job'; readonly input: JobInput }
  | { readonly kind: 'section'; readonly name: string; readonly options: unknown };

/**
 * Runs one request in a fresh child process of `script` (the bench's entry, started with the flag
 * `--child` and this process's node options, so `--expose-gc` and tsx's loader carry over).
 */
export function runInChild<T>(script: string, request: ChildRequest): Promise<T> {
  return new Promise((resolve, reject) => {
    const child = fork(script, ['--child'], { serialization: 'advanced', stdio: 'inherit' });
    let answer: { value: T } | undefined;
    child.once('message', (message) => {
      answer = { value: message as T };
    });
    child.once('error', reject);
    child.once('exit', (code) => {
      if (answer !== undefined && code === 0) resolve(answer.value);
      else reject(new Error(`bench child exited with ${code} before answering`));
    });
    child.send(request);
  });
}

/** The child's side: answers one request, then lets the process end. */
export function serveChild(sections: Record<string, (options: unknown) => void>): void {
  process.once('message', (message: ChildRequest) => {
    let answer: unknown = null;
    if (message.kind === 'job') answer = runJob(message.input);
    else sections[message.name]?.(message.options);
    process.send?.(answer, () => process.disconnect());
  });
}
