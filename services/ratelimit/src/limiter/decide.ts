import {
  Code,
  type DescriptorStatus,
  type HeaderValue,
  type RateLimitResponse,
  UINT32_MAX,
} from '../proto/messages.js';
import type { AlgorithmOutcome } from './algorithms/outcome.js';
import type { EffectiveLimit, PlannedDescriptor } from './plan.js';

/**
 * The decision for one counted descriptor and the response assembly (reference base limiter
 * `GetResponseDescriptorStatus` and service `shouldRateLimitWorker`). Pure: counts and clock in,
 * statuses out; the rule's counters are the state it updates.
 */
export interface DecideOptions {
  /** `NEAR_LIMIT_RATIO`, 0..1. */
  readonly nearLimitRatio: number;
}

function currentLimit(limit: EffectiveLimit) {
  return limit.name === ''
    ? { requestsPerUnit: limit.requestsPerUnit, unit: limit.unit }
    : { requestsPerUnit: limit.requestsPerUnit, unit: limit.unit, name: limit.name };
}

/** Seconds until the fixed, epoch-aligned window (`unit` x `unit_multiplier`) containing `nowSeconds` ends. */
export function fixedWindowReset(limit: EffectiveLimit, nowSeconds: number): number {
  const window = limit.windowSeconds;
  return window - (nowSeconds % window);
}

/** The fixed window's figures: the counter after the increment against `requests_per_unit`. */
export function fixedWindowOutcome(
  limit: EffectiveLimit,
  after: number,
  nowSeconds: number,
): AlgorithmOutcome {
  const resetMs = fixedWindowReset(limit, nowSeconds) * 1000;
  return { after, capacity: limit.requestsPerUnit, resetMs, retryAfterMs: resetMs };
}

/** `duration_until_reset` from ms: whole seconds and the nanoseconds below them. */
function withReset(status: DescriptorStatus, resetMs: number): DescriptorStatus {
  const ms = Math.max(0, resetMs);
  status.durationUntilResetSeconds = Math.floor(ms / 1000);
  const nanos = Math.round((ms % 1000) * 1e6);
  if (nanos > 0) status.durationUntilResetNanos = nanos;
  return status;
}

/** Status for a key already known (by the local cache) to be over its limit; the backend was skipped. */
export function decideOverLimitFromLocalCache(
  limit: EffectiveLimit,
  hits: number,
  nowSeconds: number,
): DescriptorStatus {
  limit.stats.overLimit.add(hits);
  limit.stats.overLimitWithLocalCache.add(hits);
  const reset = fixedWindowReset(limit, nowSeconds);
  return shadow(limit, hits, {
    code: Code.OVER_LIMIT,
    currentLimit: currentLimit(limit),
    limitRemaining: 0,
    durationUntilResetSeconds: reset,
    retryAfterMs: reset * 1000,
  });
}

function shadow(limit: EffectiveLimit, hits: number, status: DescriptorStatus): DescriptorStatus {
  if (limit.shadowMode && status.code === Code.OVER_LIMIT) {
    status.code = Code.OK;
    limit.stats.shadowMode.add(hits);
  }
  return status;
}

/** Decides one fixed-window descriptor from the counter value after its increment (`after`). */
export function decide(
  limit: EffectiveLimit,
  hits: number,
  after: number,
  nowSeconds: number,
  options: DecideOptions,
): DescriptorStatus {
  return decideOutcome(limit, hits, fixedWindowOutcome(limit, after, nowSeconds), options);
}

/**
 * Decides one descriptor of any algorithm from its outcome, with the reference's statistics:
 * OVER_LIMIT exactly when `after > capacity`.
 */
export function decideOutcome(
  limit: EffectiveLimit,
  hits: number,
  outcome: AlgorithmOutcome,
  options: DecideOptions,
): DescriptorStatus {
  const { after, capacity: max } = outcome;
  const before = after - hits;
  // The reference computes the threshold in 32-bit floats: floor(float32(limit) * float32(ratio)).
  const near = Math.floor(Math.fround(Math.fround(max) * Math.fround(options.nearLimitRatio)));
  if (after > max) {
    if (before >= max) {
      limit.stats.overLimit.add(hits);
    } else {
      limit.stats.overLimit.add(after - max);
      limit.stats.nearLimit.add(max - Math.max(near, before));
    }
    return shadow(
      limit,
      hits,
      withReset(
        {
          code: Code.OVER_LIMIT,
          currentLimit: currentLimit(limit),
          limitRemaining: 0,
          retryAfterMs: outcome.retryAfterMs,
        },
        outcome.resetMs,
      ),
    );
  }
  if (after > near) limit.stats.nearLimit.add(before >= near ? hits : after - near);
  limit.stats.withinLimit.add(hits);
  return withReset(
    { code: Code.OK, currentLimit: currentLimit(limit), limitRemaining: max - after },
    outcome.resetMs,
  );
}

export interface ResponseOptions {
  /** `SHADOW_MODE`: an OVER_LIMIT overall code becomes OK. */
  readonly globalShadowMode: boolean;
  /** `QUOTA_MODE`: every descriptor is a quota descriptor. @default false */
  readonly globalQuotaMode?: boolean;
  /** `LIMIT_RESPONSE_HEADERS_ENABLED` header names, or undefined when disabled. */
  readonly headers: { limit: string; remaining: string; reset: string } | undefined;
  /**
   * `LIMIT_ALL_DESCRIPTORS_HEADERS_ENABLED`: `x-ratelimit-limit`, `-remaining`, `-reset` with one
   * comma-separated value per descriptor that has a limit, in request order, and `retry-after`
   * on an OVER_LIMIT answer. @default false
   */
  readonly allDescriptorsHeaders?: boolean;
}

/** Whole seconds of a status' `duration_until_reset`, rounded up. */
function resetSeconds(status: DescriptorStatus): number {
  return (status.durationUntilResetSeconds ?? 0) + (status.durationUntilResetNanos ? 1 : 0);
}

/**
 * The headers of LIMIT_ALL_DESCRIPTORS_HEADERS_ENABLED. `retry-after` (whole seconds, rounded up,
 * at least 1) is the longest wait of the descriptors refusing the call: it passes once all of them
 * admit it again.
 */
function allDescriptorsHeaders(statuses: readonly DescriptorStatus[], overall: Code): HeaderValue[] {
  const limits: string[] = [];
  const remaining: string[] = [];
  const resets: string[] = [];
  let retryMs = -1;
  for (const s of statuses) {
    if (!s.currentLimit) continue;
    limits.push(String(s.currentLimit.requestsPerUnit));
    remaining.push(String(s.limitRemaining));
    resets.push(String(resetSeconds(s)));
    if (s.code === Code.OVER_LIMIT) retryMs = Math.max(retryMs, s.retryAfterMs ?? 0);
  }
  const out: HeaderValue[] = [];
  if (limits.length > 0) {
    out.push(
      { key: 'x-ratelimit-limit', value: limits.join(', ') },
      { key: 'x-ratelimit-remaining', value: remaining.join(', ') },
      { key: 'x-ratelimit-reset', value: resets.join(', ') },
    );
  }
  if (overall === Code.OVER_LIMIT && retryMs >= 0) {
    out.push({ key: 'retry-after', value: String(Math.max(1, Math.ceil(retryMs / 1000))) });
  }
  return out;
}

export interface AssembledResponse {
  response: RateLimitResponse;
  /** True when global shadow mode turned an OVER_LIMIT into OK (count `global_shadow_mode`). */
  globalShadowOverride: boolean;
  /** Indexes of the descriptors that passed (not unlimited, not OVER_LIMIT): their metadata is returned. */
  passed: number[];
}

/**
 * Combines per-descriptor statuses into the response, as the reference's `shouldRateLimitWorker`:
 * OVER_LIMIT when a rate-limit descriptor is over its limit, or when there are quota descriptors
 * (`quota_mode`, or all with QUOTA_MODE) and every one of them is over; unlimited, headers, global shadow.
 */
export function assembleResponse(
  plan: readonly PlannedDescriptor[],
  statuses: readonly DescriptorStatus[],
  options: ResponseOptions,
): AssembledResponse {
  let overall: Code = Code.OK;
  let closest: DescriptorStatus | undefined;
  let minRemaining = UINT32_MAX;
  let failedQuota = 0;
  let totalQuota = 0;
  const passed: number[] = [];
  const out: DescriptorStatus[] = new Array(plan.length);
  for (let i = 0; i < plan.length; i++) {
    const status = statuses[i]!;
    if (options.headers && status.currentLimit && status.limitRemaining < minRemaining) {
      closest = status;
      minRemaining = status.limitRemaining;
    }
    if (plan[i]!.unlimited) {
      out[i] = { code: Code.OK, limitRemaining: UINT32_MAX };
      continue;
    }
    out[i] = status;
    const quota = options.globalQuotaMode === true || plan[i]!.limit?.quotaMode === true;
    if (status.code === Code.OVER_LIMIT) {
      if (quota) {
        failedQuota++;
      } else {
        overall = Code.OVER_LIMIT;
        closest = status;
        minRemaining = 0;
      }
    } else {
      passed.push(i);
    }
    if (quota) totalQuota++;
  }
  if (totalQuota > 0 && totalQuota === failedQuota) overall = Code.OVER_LIMIT;
  const headers: HeaderValue[] = [];
  if (options.headers && closest?.currentLimit) {
    headers.push(
      { key: options.headers.limit, value: String(closest.currentLimit.requestsPerUnit) },
      { key: options.headers.remaining, value: String(closest.limitRemaining) },
      { key: options.headers.reset, value: String(resetSeconds(closest)) },
    );
  }
  let globalShadowOverride = false;
  if (overall === Code.OVER_LIMIT && options.globalShadowMode) {
    overall = Code.OK;
    globalShadowOverride = true;
  }
  if (options.allDescriptorsHeaders) headers.push(...allDescriptorsHeaders(out, overall));
  return {
    response: { overallCode: overall, statuses: out, responseHeadersToAdd: headers },
    globalShadowOverride,
    passed,
  };
}
