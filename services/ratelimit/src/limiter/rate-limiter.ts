import type { AlgorithmOp, AlgorithmReply, CounterBackend, CounterOp } from '../backends/types.js';
import { Code, type DescriptorStatus } from '../proto/messages.js';
import { slidingWindowOutcome } from './algorithms/sliding-window.js';
import { tokenBucketOutcome } from './algorithms/token-bucket.js';
import { decide, decideOutcome, decideOverLimitFromLocalCache } from './decide.js';
import type { PlannedDescriptor } from './plan.js';

/**
 * Counting a planned request with the backend (reference cache `DoLimit`): one backend call per
 * request for every descriptor that has a limit, then a pure decision per descriptor. Hooks for the
 * local over-limit cache sit here, above the backends, so every backend gets them.
 */
export interface OverLimitCache {
  /** True when `key` is known to be over its limit in its current window. */
  has(key: string, nowSeconds: number): boolean;
  /** Remembers `key` as over its limit until `expiresAtSeconds`. */
  add(key: string, expiresAtSeconds: number, nowSeconds?: number): void;
}

export interface RateLimiterOptions {
  backend: CounterBackend;
  /** `NEAR_LIMIT_RATIO`. */
  nearLimitRatio: number;
  /** `EXPIRATION_JITTER_MAX_SECONDS`: keys expire after the window plus 0..max-1 random seconds. */
  expirationJitterMaxSeconds: number;
  /** Uniform in [0, 1); Math.random in production. */
  random: () => number;
  /** `SLIDING_WINDOW_SUB_WINDOWS`: sub-windows per sliding window. @default 10 */
  slidingWindowSubWindows?: number;
  /** The local over-limit cache (`LOCAL_CACHE_SIZE_IN_BYTES` > 0). */
  localCache?: OverLimitCache | undefined;
  /**
   * `STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT`, as the reference's Redis cache: when a key of the
   * request is over its limit in the local cache, no other key is incremented; else every key is
   * read first (one extra round trip) and, when any would go over its limit, only the keys going
   * over are incremented. A key left as it is gets `INCRBY 0` and is decided on its current count
   * as if this request's hits were already in it (the reference's `before = after - hits`).
   */
  stopIncrementWhenOverLimit?: boolean;
}

const NO_LIMIT: DescriptorStatus = Object.freeze({ code: Code.OK, limitRemaining: 0 }) as DescriptorStatus;

/** The op as a check that counts nothing (`INCRBY 0`): the key's expiry is still refreshed. */
function withoutHits(op: CounterOp): CounterOp {
  return { ...op, hits: 0 };
}

export class RateLimiter {
  private readonly decideOptions: { nearLimitRatio: number };

  constructor(private readonly options: RateLimiterOptions) {
    this.decideOptions = { nearLimitRatio: options.nearLimitRatio };
  }

  private ttl(divider: number): number {
    const max = this.options.expirationJitterMaxSeconds;
    return max > 0 ? divider + Math.floor(this.options.random() * max) : divider;
  }

  /**
   * Statuses in request order. Answered at once when no key needs the backend or the backend is
   * in this process (`incrementSync`), else a promise; fails (throws or rejects) when the backend does.
   * Fixed-window keys are counted with `increment`, the other algorithms' with `admit`, both
   * queued in the same turn so that a shared backend still answers in one round trip.
   */
  doLimit(
    plan: readonly PlannedDescriptor[],
    nowSeconds: number,
    nowMs: number = nowSeconds * 1000,
  ): DescriptorStatus[] | Promise<DescriptorStatus[]> {
    const statuses = new Array<DescriptorStatus>(plan.length);
    // Sized for the usual case (every descriptor counted) and cut to what was used: `push` onto an
    // empty array would allocate room for 16 on every call.
    const ops = new Array<CounterOp>(plan.length);
    const opIndex = new Array<number>(plan.length);
    let counted = 0;
    let algorithmOps: AlgorithmOp[] | undefined;
    let algorithmIndex: number[] | undefined;
    const localCache = this.options.localCache;
    let overInLocalCache = false;
    for (let i = 0; i < plan.length; i++) {
      const p = plan[i]!;
      if (!p.limit) {
        statuses[i] = { ...NO_LIMIT };
        continue;
      }
      p.limit.stats.totalHits.add(p.hits);
      if (p.limit.algorithm !== 'fixed_window') {
        algorithmOps ??= [];
        algorithmIndex ??= [];
        algorithmOps.push(this.algorithmOp(p));
        algorithmIndex.push(i);
        continue;
      }
      if (localCache?.has(p.cacheKey, nowSeconds)) {
        statuses[i] = decideOverLimitFromLocalCache(p.limit, p.hits, nowSeconds);
        overInLocalCache = true;
        continue;
      }
      ops[counted] = {
        key: p.cacheKey,
        hits: p.hits,
        ttlSeconds: this.ttl(p.divider),
        perSecond: p.perSecond,
      };
      opIndex[counted] = i;
      counted++;
    }
    if (counted === 0 && algorithmOps === undefined) return statuses;
    if (counted < plan.length) {
      // Setting `length` is a runtime call: only when something was left out.
      ops.length = counted;
      opIndex.length = counted;
    }
    const backend = this.options.backend;
    if (algorithmOps === undefined) {
      if (backend.incrementSync && !this.options.stopIncrementWhenOverLimit) {
        const counts = backend.incrementSync(ops);
        return this.decideCounted(plan, statuses, opIndex, counts, nowSeconds);
      }
      return this.count(plan, ops, opIndex, overInLocalCache).then((counts) =>
        this.decideCounted(plan, statuses, opIndex, counts, nowSeconds),
      );
    }
    const algorithmAt = algorithmIndex!;
    if (
      backend.admitSync &&
      (counted === 0 || (backend.incrementSync && !this.options.stopIncrementWhenOverLimit))
    ) {
      if (counted > 0) this.decideCounted(plan, statuses, opIndex, backend.incrementSync!(ops), nowSeconds);
      const replies = backend.admitSync(algorithmOps, nowMs);
      return this.decideAdmitted(plan, statuses, algorithmAt, replies, nowMs);
    }
    // Both queued now, in this turn: one corked write to a shared backend.
    const counting = counted > 0 ? this.count(plan, ops, opIndex, overInLocalCache) : undefined;
    const admitting = backend.admit(algorithmOps, nowMs);
    return Promise.all([counting, admitting]).then(([counts, replies]) => {
      if (counts) this.decideCounted(plan, statuses, opIndex, counts, nowSeconds);
      return this.decideAdmitted(plan, statuses, algorithmAt, replies, nowMs);
    });
  }

  private algorithmOp(p: PlannedDescriptor): AlgorithmOp {
    const limit = p.limit!;
    const max = this.options.expirationJitterMaxSeconds;
    return {
      key: p.cacheKey,
      algorithm: limit.algorithm as AlgorithmOp['algorithm'],
      hits: p.hits,
      limit: limit.requestsPerUnit,
      burst: limit.burst,
      windowMs: limit.windowSeconds * 1000,
      subWindows: this.options.slidingWindowSubWindows ?? 10,
      jitterMs: max > 0 ? Math.floor(this.options.random() * max) * 1000 : 0,
      perSecond: p.perSecond,
    };
  }

  /** Fills `statuses` at `at` from the algorithm steps' replies (op order). */
  private decideAdmitted(
    plan: readonly PlannedDescriptor[],
    statuses: DescriptorStatus[],
    at: readonly number[],
    replies: readonly AlgorithmReply[],
    nowMs: number,
  ): DescriptorStatus[] {
    const subWindows = this.options.slidingWindowSubWindows ?? 10;
    for (let j = 0; j < at.length; j++) {
      const i = at[j]!;
      const p = plan[i]!;
      const limit = p.limit!;
      const reply = replies[j]!;
      const windowMs = limit.windowSeconds * 1000;
      const outcome =
        limit.algorithm === 'sliding_window'
          ? slidingWindowOutcome(reply.values, reply.admitted, nowMs, p.hits, {
              limit: limit.requestsPerUnit,
              windowMs,
              subWindows,
            })
          : tokenBucketOutcome(reply.values[0] ?? 0, reply.admitted, p.hits, {
              rate: limit.requestsPerUnit,
              burst: limit.burst,
              windowMs,
            });
      statuses[i] = decideOutcome(limit, p.hits, outcome, this.decideOptions);
    }
    return statuses;
  }

  /** Fills `statuses` at `opIndex` from the backend's counts (op order) and feeds the local cache. */
  private decideCounted(
    plan: readonly PlannedDescriptor[],
    statuses: DescriptorStatus[],
    opIndex: readonly number[],
    counts: readonly number[],
    nowSeconds: number,
  ): DescriptorStatus[] {
    const localCache = this.options.localCache;
    for (let j = 0; j < opIndex.length; j++) {
      const i = opIndex[j]!;
      const p = plan[i]!;
      const limit = p.limit!;
      statuses[i] = decide(limit, p.hits, counts[j]!, nowSeconds, this.decideOptions);
      if (localCache && counts[j]! > limit.requestsPerUnit) {
        localCache.add(p.cacheKey, Math.floor(nowSeconds / p.divider) * p.divider + p.divider, nowSeconds);
      }
    }
    return statuses;
  }

  /** The counts after this request's increments, in op order. */
  private async count(
    plan: readonly PlannedDescriptor[],
    ops: CounterOp[],
    opIndex: number[],
    overInLocalCache: boolean,
  ): Promise<number[]> {
    const backend = this.options.backend;
    if (!this.options.stopIncrementWhenOverLimit) return backend.increment(ops);
    if (overInLocalCache) return backend.increment(ops.map(withoutHits));
    const current = await backend.read(ops);
    const over = ops.map((op, j) => current[j]! + op.hits > plan[opIndex[j]!]!.limit!.requestsPerUnit);
    if (!over.includes(true)) return backend.increment(ops);
    return backend.increment(ops.map((op, j) => (over[j] ? op : withoutHits(op))));
  }
}
