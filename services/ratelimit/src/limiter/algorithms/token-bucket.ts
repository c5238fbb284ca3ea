import type { AlgorithmOutcome } from './outcome.js';

/**
 * The token bucket (`algorithm: token_bucket`): capacity `burst`, refilled continuously at `rate`
 * (`requests_per_unit`) tokens per window; a call asking more than the tokens left is refused and
 * takes nothing. Tokens are kept scaled by the window's length in ms (one token = `windowMs`
 * units, refill = `rate` units per ms), so every step is integer arithmetic, exact in JavaScript
 * and in Redis' Lua alike while `burst * windowMs` stays below 2^53 (checked when the rules load).
 *
 * Pure: the stored state, the clock and the call in; the admission and the state to store out.
 * The Redis script (backends/redis-scripts.ts) is the same step in Lua.
 */
export interface TokenBucketSpec {
  /** `requests_per_unit`: tokens added per window. */
  readonly rate: number;
  /** `burst`: the capacity (`requests_per_unit` unless set). */
  readonly burst: number;
  /** `unit` x `unit_multiplier`, in ms. */
  readonly windowMs: number;
}

export interface TokenBucketState {
  /** Scaled tokens: whole tokens x windowMs. */
  readonly tokens: number;
  /** When `tokens` was computed (ms since the epoch). */
  readonly atMs: number;
}

export interface TokenBucketStep {
  readonly admitted: boolean;
  /** Scaled tokens left after the call. */
  readonly tokens: number;
  readonly next: TokenBucketState;
}

export function tokenBucketStep(
  stored: TokenBucketState | undefined,
  nowMs: number,
  hits: number,
  spec: TokenBucketSpec,
): TokenBucketStep {
  const capacity = spec.burst * spec.windowMs;
  let tokens = capacity;
  let atMs = nowMs;
  if (stored) {
    // A clock behind the stored one (another instance's) refills nothing and keeps the later time.
    const elapsed = Math.max(0, nowMs - stored.atMs);
    tokens = Math.min(capacity, stored.tokens + elapsed * spec.rate);
    atMs = Math.max(stored.atMs, nowMs);
  }
  const need = hits * spec.windowMs;
  const admitted = need <= tokens;
  if (admitted) tokens -= need;
  return { admitted, tokens, next: { tokens, atMs } };
}

/** Milliseconds until the bucket holding `tokens` (scaled) is full again: how long its state matters. */
export function tokenBucketFullInMs(tokens: number, spec: TokenBucketSpec): number {
  if (spec.rate === 0) return spec.windowMs;
  return Math.ceil((spec.burst * spec.windowMs - tokens) / spec.rate);
}

/**
 * The decision's figures: `after = burst - whole tokens before + hits` against `burst`, so
 * `limit_remaining` is the whole tokens left; the reset is when the next whole token is back (0
 * when full); a refused call may retry when its hits are back.
 */
export function tokenBucketOutcome(
  tokens: number,
  admitted: boolean,
  hits: number,
  spec: TokenBucketSpec,
): AlgorithmOutcome {
  const whole = Math.floor(tokens / spec.windowMs);
  const after = spec.burst - whole + (admitted ? 0 : hits);
  if (spec.rate === 0) {
    return {
      after,
      capacity: spec.burst,
      resetMs: spec.windowMs,
      retryAfterMs: admitted ? 0 : spec.windowMs,
    };
  }
  const resetMs = whole >= spec.burst ? 0 : Math.ceil(((whole + 1) * spec.windowMs - tokens) / spec.rate);
  let retryAfterMs = 0;
  if (!admitted) {
    retryAfterMs =
      hits > spec.burst
        ? spec.windowMs // never admitted: one window is the hint
        : Math.ceil((hits * spec.windowMs - tokens) / spec.rate);
  }
  return { after, capacity: spec.burst, resetMs, retryAfterMs };
}
