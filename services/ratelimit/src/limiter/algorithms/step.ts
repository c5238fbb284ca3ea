import type { AlgorithmOp, AlgorithmReply } from '../../backends/types.js';
import { slidingWindowStep, subWindowMs } from './sliding-window.js';
import { type TokenBucketState, tokenBucketFullInMs, tokenBucketStep } from './token-bucket.js';

/**
 * One AlgorithmOp's step on a state kept by the caller (the in-process store; the Redis script is
 * the same in Lua): the reply, the state to keep and for how long. Pure.
 */
export type AlgorithmState = ReadonlyMap<number, number> | TokenBucketState;

export interface StepResult {
  readonly reply: AlgorithmReply;
  /** undefined: nothing worth keeping (a sliding window with no count, a full bucket). */
  readonly next: AlgorithmState | undefined;
  /** How long `next` matters, jitter included. */
  readonly ttlMs: number;
}

export function runAlgorithmStep(
  op: AlgorithmOp,
  state: AlgorithmState | undefined,
  nowMs: number,
): StepResult {
  if (op.algorithm === 'sliding_window') {
    const spec = { limit: op.limit, windowMs: op.windowMs, subWindows: op.subWindows };
    const stored = state instanceof Map ? state : undefined;
    const step = slidingWindowStep(stored, nowMs, op.hits, spec);
    return {
      reply: { admitted: step.admitted, values: step.counts },
      next: step.next.size > 0 ? step.next : undefined,
      // The newest sub-window stops counting one window after it ends.
      ttlMs: op.windowMs + subWindowMs(spec) + op.jitterMs,
    };
  }
  const spec = { rate: op.limit, burst: op.burst, windowMs: op.windowMs };
  const stored = state !== undefined && !(state instanceof Map) ? (state as TokenBucketState) : undefined;
  const step = tokenBucketStep(stored, nowMs, op.hits, spec);
  const fullInMs = tokenBucketFullInMs(step.tokens, spec);
  return {
    reply: { admitted: step.admitted, values: [step.tokens] },
    next: fullInMs > 0 ? step.next : undefined,
    ttlMs: fullInMs + op.jitterMs,
  };
}
