import { type LimitRule, UNIT_SECONDS } from './rules.js';

/**
 * Fixed-window counting, pure: the counter and the clock come in, the new counter and the verdict go
 * out. It counts as services/ratelimit does (design/ratelimit-reference.md, "Limits, keys and
 * counting"): windows aligned to the Unix epoch in whole seconds, every hit counted (refused ones
 * too), over the limit when the count after this hit exceeds it.
 */

/** One subject's count in one window. */
export interface WindowCounter {
  /** Unix seconds at which the window began. */
  readonly windowStart: number;
  readonly count: number;
}

/** The decision of one rule for one request. */
export interface RuleVerdict {
  readonly rule: LimitRule;
  readonly allowed: boolean;
  /** Requests allowed per window (the decider's figure, which for services/ratelimit is its own config's). */
  readonly limit: number;
  /** Length of the window in seconds. */
  readonly windowSeconds: number;
  /** Requests left in the window after this one (0 when refused). */
  readonly remaining: number;
  /** Whole seconds until the window ends (1..window length). */
  readonly resetSeconds: number;
}

/** Unix seconds at which the window holding `nowSeconds` began. */
export function windowStartOf(rule: LimitRule, nowSeconds: number): number {
  const divider = UNIT_SECONDS[rule.unit];
  return Math.floor(nowSeconds / divider) * divider;
}

/** Has the counter's window ended at `nowMs`? Then it can be forgotten. */
export function windowEnded(rule: LimitRule, counter: WindowCounter, nowMs: number): boolean {
  return counter.windowStart + UNIT_SECONDS[rule.unit] <= Math.floor(nowMs / 1000);
}

/** Counts one hit at `nowMs` against `counter` (undefined: no hit yet in any window). */
export function hit(
  rule: LimitRule,
  counter: WindowCounter | undefined,
  nowMs: number,
): { counter: WindowCounter; verdict: RuleVerdict } {
  const nowSeconds = Math.floor(nowMs / 1000);
  const windowStart = windowStartOf(rule, nowSeconds);
  const before = counter && counter.windowStart === windowStart ? counter.count : 0;
  const after = before + 1;
  const allowed = after <= rule.requestsPerUnit;
  return {
    counter: { windowStart, count: after },
    verdict: {
      rule,
      allowed,
      limit: rule.requestsPerUnit,
      windowSeconds: UNIT_SECONDS[rule.unit],
      remaining: allowed ? rule.requestsPerUnit - after : 0,
      resetSeconds: UNIT_SECONDS[rule.unit] - (nowSeconds % UNIT_SECONDS[rule.unit]),
    },
  };
}
