/**
 * What every algorithm's decision comes down to, so one decision function (limiter/decide.ts)
 * counts the statistics and builds the status for all of them: `after` against `capacity` is the
 * fixed window's "counter after the increment" against its limit (OVER_LIMIT exactly when
 * `after > capacity`, `limit_remaining = capacity - after` otherwise).
 */
export interface AlgorithmOutcome {
  /** The count with this call's hits in it, admitted or not. */
  readonly after: number;
  /** The limit `after` is held against (`requests_per_unit`; a token bucket's `burst`). */
  readonly capacity: number;
  /** `duration_until_reset`, in ms. */
  readonly resetMs: number;
  /** For a refused call: ms until the same call would be admitted (0 when admitted). */
  readonly retryAfterMs: number;
}
