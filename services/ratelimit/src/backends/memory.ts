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
  /** `MEMORY_MAX_KEYS`: live keys held at most (see `StoreFullError`). @default 2000000 */
  maxKeys?: number;
}

/**
 * A call that needs a new key while the store holds `MEMORY_MAX_KEYS` live ones (after dropping
 * the expired): the call fails as a backend failure does (BACKEND_FAILURE_MODE answers it), and
 * nothing of it is counted. Without the bound, requests with ever new descriptor values on a
 * long window grew the heap until the process died (200-360 bytes a key).
 */
export class StoreFullError extends Error {
  constructor(readonly maxKeys: number) {
    super(`the in-process store holds MEMORY_MAX_KEYS (${maxKeys}) live keys: no new key until some expire`);
    this.name = 'StoreFullError';
  }
}

export class MemoryBackend implements CounterBackend {
  readonly description = 'in-process store (single instance; counters are not shared)';
  readonly algorithms = new Set(ALGORITHMS);
  private readonly entries = new Map<string, Entry>();
  /** Sliding-window and token-bucket states, by key. */
  private readonly states = new Map<string, StateEntry>();
  private readonly now: () => number;
  private readonly sweeper: NodeJS.Timeout;
  private readonly maxKeys: number;
  /** When the store was last swept because it was full (at most once a second). */
  private fullSweepAtMs = Number.NEGATIVE_INFINITY;

  constructor(options: MemoryBackendOptions = {}) {
    this.now = options.now ?? Date.now;
    this.maxKeys = options.maxKeys ?? 2_000_000;
    this.sweeper = setInterval(() => this.sweep(), options.sweepIntervalMs ?? 10_000);
    this.sweeper.unref();
  }

  /** The limiter's synchronous path (see `CounterBackend.incrementSync`); `increment` wraps it. */
  incrementSync(ops: readonly CounterOp[]): number[] {
    const nowMs = this.now();
    if (this.entries.size + this.states.size + ops.length > this.maxKeys)
      this.makeRoom(ops, this.entries, nowMs);
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
    if (this.entries.size + this.states.size + ops.length > this.maxKeys)
      this.makeRoom(ops, this.states, clock);
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

  /**
   * Near the bound (checked by the callers with the op count, so that the usual call pays one
   * comparison): throws `StoreFullError`, before anything is counted, when the ops' new keys would
   * pass it, once the expired keys are dropped (a full sweep at most once a second).
   */
  private makeRoom(
    ops: readonly { readonly key: string }[],
    map: ReadonlyMap<string, unknown>,
    nowMs: number,
  ): void {
    let fresh = 0;
    for (const op of ops) if (!map.has(op.key)) fresh++;
    if (this.entries.size + this.states.size + fresh <= this.maxKeys) return;
    if (nowMs - this.fullSweepAtMs >= 1000) {
      this.fullSweepAtMs = nowMs;
      this.sweep();
    }
    if (this.entries.size + this.states.size + fresh > this.maxKeys) throw new StoreFullError(this.maxKeys);
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
