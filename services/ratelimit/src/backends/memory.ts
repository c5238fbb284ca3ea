import { type AlgorithmState, runAlgorithmStep } from '../limiter/algorithms/step.js';
import { ALGORITHMS } from '../rules/algorithm.js';
import type { AlgorithmOp, AlgorithmReply, CounterBackend, CounterOp } from './types.js';

/**
 * The in-process counter store: the embedded default when no backend is configured. Exact for one
 * process only (counters are not shared between instances or workers). Keys carry their window start,
 * so an expired key is simply dropped: lazily when touched, and by a sweep every `sweepIntervalMs`.
 */
interface Entry {
  count: number;
  expiresAtMs: number;
}

interface StateEntry {
  state: AlgorithmState;
  expiresAtMs: number;
}

export interface MemoryBackendOptions {
  /** Milliseconds since the epoch. @default Date.now */
  now?: () => number;
  /** @default 10000 */
  sweepIntervalMs?: number;
}

export class MemoryBackend implements CounterBackend {
  readonly description = 'in-process store (single instance; counters are not shared)';
  readonly algorithms = new Set(ALGORITHMS);
  private readonly entries = new Map<string, Entry>();
  /** Sliding-window and token-bucket states, by key. */
  private readonly states = new Map<string, StateEntry>();
  private readonly now: () => number;
  private readonly sweeper: NodeJS.Timeout;

  constructor(options: MemoryBackendOptions = {}) {
    this.now = options.now ?? Date.now;
    this.sweeper = setInterval(() => this.sweep(), options.sweepIntervalMs ?? 10_000);
    this.sweeper.unref();
  }

  /** The limiter's synchronous path (see `CounterBackend.incrementSync`); `increment` wraps it. */
  incrementSync(ops: readonly CounterOp[]): number[] {
    const nowMs = this.now();
    const out = new Array<number>(ops.length);
    for (let i = 0; i < ops.length; i++) {
      const op = ops[i]!;
      let entry = this.entries.get(op.key);
      if (!entry || entry.expiresAtMs <= nowMs) {
        entry = { count: 0, expiresAtMs: 0 };
        this.entries.set(op.key, entry);
      }
      entry.count += op.hits;
      // Like Redis EXPIRE after INCRBY: every increment refreshes the expiry.
      entry.expiresAtMs = nowMs + op.ttlSeconds * 1000;
      out[i] = entry.count;
    }
    return out;
  }

  increment(ops: readonly CounterOp[]): Promise<number[]> {
    return Promise.resolve(this.incrementSync(ops));
  }

  /** The limiter's synchronous path for the other algorithms; `admit` wraps it. */
  admitSync(ops: readonly AlgorithmOp[], nowMs: number): AlgorithmReply[] {
    const clock = this.now();
    const out = new Array<AlgorithmReply>(ops.length);
    for (let i = 0; i < ops.length; i++) {
      const op = ops[i]!;
      const entry = this.states.get(op.key);
      const live = entry && entry.expiresAtMs > clock ? entry.state : undefined;
      const step = runAlgorithmStep(op, live, nowMs);
      if (step.next === undefined) this.states.delete(op.key);
      else this.states.set(op.key, { state: step.next, expiresAtMs: clock + step.ttlMs });
      out[i] = step.reply;
    }
    return out;
  }

  admit(ops: readonly AlgorithmOp[], nowMs: number): Promise<AlgorithmReply[]> {
    return Promise.resolve(this.admitSync(ops, nowMs));
  }

  read(ops: readonly CounterOp[]): Promise<number[]> {
    const nowMs = this.now();
    return Promise.resolve(
      ops.map((op) => {
        const entry = this.entries.get(op.key);
        return entry && entry.expiresAtMs > nowMs ? entry.count : 0;
      }),
    );
  }

  /** Number of live keys (for tests and the debug page). */
  size(): number {
    return this.entries.size + this.states.size;
  }

  sweep(): void {
    const nowMs = this.now();
    for (const [key, entry] of this.entries) if (entry.expiresAtMs <= nowMs) this.entries.delete(key);
    for (const [key, entry] of this.states) if (entry.expiresAtMs <= nowMs) this.states.delete(key);
  }

  healthy(): boolean {
    return true;
  }

  onHealthChange(): void {}

  ready(): Promise<boolean> {
    return Promise.resolve(true);
  }

  close(): Promise<void> {
    clearInterval(this.sweeper);
    this.entries.clear();
    this.states.clear();
    return Promise.resolve();
  }
}
