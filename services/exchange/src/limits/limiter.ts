import type { RuleVerdict } from './fixed-window.js';
import type { LimitRule } from './rules.js';

/**
 * The one small interface behind which the exchange's request limits are decided: in-process
 * (memory-limiter.ts) or by services/ratelimit over gRPC (grpc-limiter.ts). Both run the contract
 * suite of test/limits/limiter.contract.ts.
 */

/** One rule to count for one subject (a client address or an API key id). */
export interface LimitCheck {
  readonly rule: LimitRule;
  readonly subject: string;
}

/**
 * The answer for a set of checks: a verdict per check, in order, or why none could be had. A failure
 * is a value: the HTTP edge applies the fail-open / fail-closed setting to it.
 */
export type LimitOutcome =
  | { readonly kind: 'decided'; readonly verdicts: readonly (RuleVerdict | undefined)[] }
  | {
      readonly kind: 'failed';
      readonly reason: 'timeout' | 'unavailable' | 'error';
      readonly message: string;
    };

export interface RequestLimiter {
  /** Counts one hit for every check and decides. A verdict is undefined when the decider knows no limit for that rule. */
  check(checks: readonly LimitCheck[]): Promise<LimitOutcome>;
  /** Where decisions are made, for the start-up log. */
  readonly description: string;
  close(): Promise<void>;
}
