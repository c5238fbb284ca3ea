import type { Algorithm } from '../rules/algorithm.js';

/**
 * The counter store behind the limiter. Every backend (in-process, Redis single/sentinel/cluster,
 * a per-second split, memcached) implements this one interface and passes one contract suite
 * (test/backends/contract.ts). Decisions are made above it (limiter/rate-limiter.ts), so a backend
 * only counts.
 */
export interface CounterOp {
  /** The full cache key, prefix and window start included. */
  readonly key: string;
  /** Amount to add; 0 checks without counting. */
  readonly hits: number;
  /** Expiry of the key in seconds when it is created or refreshed (window length plus jitter). */
  readonly ttlSeconds: number;
  /** True for SECOND-unit limits (routed to the per-second store when one is configured). */
  readonly perSecond: boolean;
}

/**
 * A sliding-window or token-bucket call on one key (limiter/algorithms/): the backend runs the
 * algorithm's step atomically against the key's stored state and stores the result.
 */
export interface AlgorithmOp {
  readonly key: string;
  readonly algorithm: 'sliding_window' | 'token_bucket';
  /** Amount asked for; 0 checks without taking anything. */
  readonly hits: number;
  /** `requests_per_unit`: the sliding window's limit, the token bucket's refill per window. */
  readonly limit: number;
  /** The token bucket's capacity. */
  readonly burst: number;
  /** `unit` x `unit_multiplier`, in ms. */
  readonly windowMs: number;
  /** Sliding window: sub-windows per window. */
  readonly subWindows: number;
  /** Kept this much longer than the state needs (EXPIRATION_JITTER_MAX_SECONDS, in ms). */
  readonly jitterMs: number;
  /** True for SECOND-unit limits (routed to the per-second store when one is configured). */
  readonly perSecond: boolean;
}

/**
 * What the step answered: whether the hits were admitted, and the state after the call: the
 * sliding window's n + 1 counted sub-window counts (oldest first), or the token bucket's scaled
 * tokens as the one value.
 */
export interface AlgorithmReply {
  readonly admitted: boolean;
  readonly values: readonly number[];
}

export interface CounterBackend {
  /** Human-readable description for the start-up log, e.g. `redis single 127.0.0.1:6379`. */
  readonly description: string;
  /**
   * Adds `hits` to every key and returns each key's count after the addition, in op order.
   * A shared backend does this in one round trip per call (Redis: one pipeline of INCRBY+EXPIRE per
   * op). Backends with asynchronous increments (memcached) read first and return read + hits.
   * Rejects when the backend cannot be reached (within a bounded time).
   */
  increment(ops: readonly CounterOp[]): Promise<number[]>;
  /**
   * The same as `increment`, answered at once, for a store that lives in this process (the
   * in-process store): the limiter then decides without a promise and a microtask per call.
   * Absent on every store behind a network round trip.
   */
  incrementSync?(ops: readonly CounterOp[]): number[];
  /**
   * The algorithms this backend can run: `fixed_window` (`increment`) always; `admit` the others.
   * A rule asking for another one refuses its file at load, naming the rule and the backend.
   */
  readonly algorithms: ReadonlySet<Algorithm>;
  /**
   * Runs each op's algorithm step atomically on its key, with `nowMs` as the clock; replies in op
   * order, one round trip for the whole call (Redis: one script call per node). Rejects when the
   * backend cannot be reached, or for an algorithm it does not run.
   */
  admit(ops: readonly AlgorithmOp[], nowMs: number): Promise<AlgorithmReply[]>;
  /** The same as `admit`, answered at once, for the in-process store (see `incrementSync`). */
  admitSync?(ops: readonly AlgorithmOp[], nowMs: number): AlgorithmReply[];
  /** Current counts (0 for a missing key) without changing them, in op order; one round trip. */
  read(ops: readonly CounterOp[]): Promise<number[]>;
  /** False while the backend is known to be unreachable (only tracked when health checking is on). */
  healthy(): boolean;
  /** Called with the new state whenever `healthy()` changes. */
  onHealthChange(listener: (healthy: boolean) => void): void;
  /** Waits (bounded) until the backend is usable; resolves false when it is not yet. */
  ready(): Promise<boolean>;
  close(): Promise<void>;
}

/**
 * A key the backend can never store (memcached: over 250 bytes or with whitespace/control
 * characters). The call fails with this message whatever BACKEND_FAILURE_MODE says: it is a
 * property of the request, not an outage.
 */
export class InvalidKeyError extends Error {}
