/**
 * Brute-force protection of redemptions (pure). Failed redemptions are counted per account and per
 * client address in fixed windows: once a subject has more than its limit of failures in the current
 * window, its redemptions are refused until the window ends. The counters live in the database
 * (svc_code_failures, see failures.ts); this module only decides.
 */

export interface FailureLimits {
  /** Failed redemptions allowed per account and window. @default 10 (`SVC_CODE_FAILURES_PER_ACCOUNT`) */
  readonly perAccount: number;
  /** Failed redemptions allowed per client address and window. @default 30 (`SVC_CODE_FAILURES_PER_ADDRESS`) */
  readonly perAddress: number;
  /** Window length in ms. @default 900000 (`SVC_CODE_FAILURE_WINDOW_MS`) */
  readonly windowMs: number;
}

export const DEFAULT_FAILURE_LIMITS: FailureLimits = Object.freeze({
  perAccount: 10,
  perAddress: 30,
  windowMs: 900_000,
});

export type FailureSubject = 'account' | 'address';

/** A counter as stored: failures (attempts reserved, see failures.ts) since `windowStart` (ms). */
export interface FailureWindow {
  readonly kind: FailureSubject;
  readonly windowStart: number;
  readonly failures: number;
}

/** Has the window of a counter ended at `now`? Then the next failure starts a new one. */
export function windowEnded(windowStart: number, windowMs: number, now: number): boolean {
  return windowStart + windowMs <= now;
}

/**
 * Milliseconds until a redemption may be tried again, or 0 when it may go ahead now. `windows` are
 * the counters after this attempt was counted: an attempt is refused when it would be failure number
 * limit + 1 or more of a live window.
 */
export function retryAfterMs(windows: readonly FailureWindow[], limits: FailureLimits, now: number): number {
  let wait = 0;
  for (const window of windows) {
    if (windowEnded(window.windowStart, limits.windowMs, now)) continue;
    const limit = window.kind === 'account' ? limits.perAccount : limits.perAddress;
    if (window.failures > limit) wait = Math.max(wait, window.windowStart + limits.windowMs - now);
  }
  return wait;
}
