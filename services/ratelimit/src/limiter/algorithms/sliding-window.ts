import type { AlgorithmOutcome } from './outcome.js';

/**
 * The sliding window (`algorithm: sliding_window`): at most `limit` hits admitted in any interval
 * of the window's length, wherever it starts. The window is cut into `subWindows` whole sub-windows
 * of `windowMs / subWindows` ms each (index = floor(ms / subWindowMs)); a call at sub-window `i`
 * counts sub-windows `i - n` .. `i` (n + 1 of them: every sub-window an interval of the window's
 * length ending now can touch), and admits `hits` only when that sum plus `hits` stays within the
 * limit. Any interval of the window's length lies within n + 1 consecutive sub-windows, all of
 * which the last hit admitted in it counted, so no interval ever holds more than the limit; the
 * price is refusing early by at most the oldest sub-window's count. A refused call takes nothing.
 *
 * Pure: the stored counts, the clock and the call in; the admission, the counts after it and the
 * state to store out. The Redis script (backends/redis-scripts.ts) is the same step in Lua, and
 * `slidingWindowOutcome` turns what either returns into the decision's figures.
 */
export interface SlidingWindowSpec {
  /** `requests_per_unit`. */
  readonly limit: number;
  /** `unit` x `unit_multiplier`, in ms. */
  readonly windowMs: number;
  /** Sub-windows per window (`SLIDING_WINDOW_SUB_WINDOWS`). */
  readonly subWindows: number;
}

export interface SlidingWindowStep {
  readonly admitted: boolean;
  /** Counts of the n + 1 counted sub-windows after the call, oldest (`i - n`) first. */
  readonly counts: number[];
  /** What to store: the sub-windows still counted (index -> count), this call's hits included. */
  readonly next: Map<number, number>;
}

export function subWindowMs(spec: SlidingWindowSpec): number {
  return spec.windowMs / spec.subWindows;
}

/**
 * One call against the stored counts. A sub-window newer than the current one (another instance's
 * clock running ahead) is counted as the current one: that errs toward refusing, never admitting.
 */
export function slidingWindowStep(
  stored: ReadonlyMap<number, number> | undefined,
  nowMs: number,
  hits: number,
  spec: SlidingWindowSpec,
): SlidingWindowStep {
  const n = spec.subWindows;
  const current = Math.floor(nowMs / subWindowMs(spec));
  const oldest = current - n;
  const counts = new Array<number>(n + 1).fill(0);
  const next = new Map<number, number>();
  let used = 0;
  if (stored) {
    for (const [index, count] of stored) {
      if (index < oldest || count <= 0) continue;
      next.set(index, count);
      counts[Math.min(index, current) - oldest]! += count;
      used += count;
    }
  }
  const admitted = used + hits <= spec.limit;
  if (admitted && hits > 0) {
    next.set(current, (next.get(current) ?? 0) + hits);
    counts[n]! += hits;
  }
  return { admitted, counts, next };
}

/**
 * The decision's figures from the counts after a call: `after` (the counted sum with this call's
 * hits, admitted or not) against the limit; the reset is when the oldest sub-window holding a
 * count leaves the counted range (the current one's when none holds any); a refused call may retry
 * when enough sub-windows have left for its hits to fit.
 */
export function slidingWindowOutcome(
  counts: readonly number[],
  admitted: boolean,
  nowMs: number,
  hits: number,
  spec: SlidingWindowSpec,
): AlgorithmOutcome {
  const n = spec.subWindows;
  const sub = subWindowMs(spec);
  const current = Math.floor(nowMs / sub);
  let total = 0;
  for (const c of counts) total += c;
  const after = admitted ? total : total + hits;
  // Sub-window `current - n + j` leaves the counted range when `current + j + 1` begins.
  const leavesAt = (j: number): number => (current + j + 1) * sub - nowMs;
  let oldestHeld = counts.findIndex((c) => c > 0);
  if (oldestHeld < 0) oldestHeld = n;
  const resetMs = leavesAt(oldestHeld);
  let retryAfterMs = 0;
  if (!admitted) {
    if (spec.limit === 0 || hits > spec.limit) {
      // Never admitted: nothing to wait for; one window is the hint.
      retryAfterMs = spec.windowMs;
    } else {
      retryAfterMs = leavesAt(n);
      let left = total;
      for (let j = 0; j <= n; j++) {
        left -= counts[j]!;
        if (left + hits <= spec.limit) {
          retryAfterMs = leavesAt(j);
          break;
        }
      }
    }
  }
  return { after, capacity: spec.limit, resetMs, retryAfterMs };
}
