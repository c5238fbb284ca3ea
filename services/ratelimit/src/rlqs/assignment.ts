import type { EffectiveLimit } from '../limiter/plan.js';
import type { Strategy } from './protos.js';

/**
 * What one bucket is assigned, from its rule and the shared state of that rule's counter. Pure.
 *
 * - No rule, an unlimited rule, or shadow mode (the rule's or SHADOW_MODE): `ALLOW_ALL`.
 * - `requests_per_unit: 0`: `DENY_ALL`.
 * - A fixed or sliding window whose reported usage reached the limit in the current window
 *   (epoch-aligned, `unit` x `unit_multiplier`): `DENY_ALL` until the window ends.
 * - Otherwise a token bucket holding this participant's equal share: the rule's rate split among
 *   the `participants` (stream x bucket pairs that reported it within the assignment TTL), each
 *   getting `floor(limit / n)` (at least 1) as `max_tokens` and `tokens_per_fill` per window, so the
 *   shares never add up to more than the limit (while n <= limit); a token-bucket rule's `burst`
 *   is split the same way into `max_tokens`.
 */
export interface QuotaState {
  /** Stream x bucket pairs that reported the rule's counter within the assignment TTL (this one included). */
  readonly participants: number;
  /** Requests reported allowed in the current window, by every participant. */
  readonly usage: number;
}

export interface Assignment {
  readonly strategy: Strategy;
  /** True when shadow mode turned a DENY_ALL into ALLOW_ALL. */
  readonly shadowed: boolean;
  /** The window cap refuses until `windowEndMs`. */
  readonly capped: boolean;
}

const ALLOW_ALL: Strategy = Object.freeze({ kind: 'allow_all' });
const DENY_ALL: Strategy = Object.freeze({ kind: 'deny_all' });

export function assignmentFor(
  limit: EffectiveLimit | undefined,
  state: QuotaState,
  shadow: boolean,
): Assignment {
  if (!limit) return { strategy: ALLOW_ALL, shadowed: false, capped: false };
  const capped = limit.algorithm !== 'token_bucket' && state.usage >= limit.requestsPerUnit;
  if (limit.requestsPerUnit === 0 || capped) {
    return shadow
      ? { strategy: ALLOW_ALL, shadowed: true, capped }
      : { strategy: DENY_ALL, shadowed: false, capped };
  }
  if (shadow) return { strategy: ALLOW_ALL, shadowed: false, capped: false };
  const n = Math.max(1, state.participants);
  // One object per rule and participant count (a 10,000-bucket report would make as many).
  let byCount = SHARES.get(limit.stats);
  if (!byCount) {
    byCount = new Map();
    SHARES.set(limit.stats, byCount);
  }
  const known = byCount.get(n);
  if (known && sameLimit(known.limit, limit)) return known.assignment;
  const assignment = share(limit, n);
  if (byCount.size >= 1000) byCount.clear();
  byCount.set(n, { limit, assignment });
  return assignment;
}

/** Cached shares, by the rule's stats object (one per rule and stats key) and participant count. */
const SHARES = new WeakMap<object, Map<number, { limit: EffectiveLimit; assignment: Assignment }>>();

const sameLimit = (a: EffectiveLimit, b: EffectiveLimit): boolean =>
  a === b ||
  (a.requestsPerUnit === b.requestsPerUnit &&
    a.burst === b.burst &&
    a.algorithm === b.algorithm &&
    a.windowSeconds === b.windowSeconds);

function share(limit: EffectiveLimit, n: number): Assignment {
  const capacity = limit.algorithm === 'token_bucket' ? limit.burst : limit.requestsPerUnit;
  return Object.freeze({
    strategy: Object.freeze({
      kind: 'token_bucket',
      maxTokens: Math.max(1, Math.floor(capacity / n)),
      tokensPerFill: Math.max(1, Math.floor(limit.requestsPerUnit / n)),
      fillIntervalSeconds: limit.windowSeconds,
    }),
    shadowed: false,
    capped: false,
  });
}

export function sameStrategy(a: Strategy | undefined, b: Strategy): boolean {
  if (a === undefined || a.kind !== b.kind) return false;
  if (a.kind !== 'token_bucket' || b.kind !== 'token_bucket') return true;
  return (
    a.maxTokens === b.maxTokens &&
    a.tokensPerFill === b.tokensPerFill &&
    a.fillIntervalSeconds === b.fillIntervalSeconds
  );
}

/** Start (ms) of the epoch-aligned window of `windowSeconds` holding `nowMs`. */
export function windowStartMs(nowMs: number, windowSeconds: number): number {
  const w = windowSeconds * 1000;
  return Math.floor(nowMs / w) * w;
}

/**
 * The rule's statistics from one report of a bucket, in the reference's names: `total_hits`
 * (allowed + denied), `over_limit` (denied by Envoy), `within_limit` (allowed), `near_limit`
 * (allowed past the near-limit threshold of the window's usage, up to the limit) and
 * `shadow_mode` (allowed past the limit under shadow mode: what it would have blocked).
 */
export function countReport(
  limit: EffectiveLimit,
  allowed: number,
  denied: number,
  usageAfter: number,
  nearLimitRatio: number,
  shadow: boolean,
): void {
  const stats = limit.stats;
  stats.totalHits.add(allowed + denied);
  if (denied > 0) stats.overLimit.add(denied);
  if (allowed === 0) return;
  stats.withinLimit.add(allowed);
  const max = limit.algorithm === 'token_bucket' ? Number.POSITIVE_INFINITY : limit.requestsPerUnit;
  const near = Math.floor(Math.fround(Math.fround(limit.requestsPerUnit) * Math.fround(nearLimitRatio)));
  const before = usageAfter - allowed;
  const nearPart = Math.min(usageAfter, max) - Math.max(before, near);
  if (limit.algorithm !== 'token_bucket' && nearPart > 0) stats.nearLimit.add(nearPart);
  if (shadow && usageAfter > max) stats.shadowMode.add(usageAfter - Math.max(before, max));
}
