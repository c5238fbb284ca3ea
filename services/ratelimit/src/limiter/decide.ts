import {
  Code,
  type DescriptorStatus,
  type HeaderValue,
  type RateLimitResponse,
  UINT32_MAX,
} from '../proto/messages.js';
import type { EffectiveLimit, PlannedDescriptor } from './plan.js';
import { secondsUntilReset } from './units.js';

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

/** Status for a key already known (by the local cache) to be over its limit; the backend was skipped. */
export function decideOverLimitFromLocalCache(
  limit: EffectiveLimit,
  hits: number,
  nowSeconds: number,
): DescriptorStatus {
  limit.stats.overLimit.add(hits);
  limit.stats.overLimitWithLocalCache.add(hits);
  return shadow(limit, hits, {
    code: Code.OVER_LIMIT,
    currentLimit: currentLimit(limit),
    limitRemaining: 0,
    durationUntilResetSeconds: secondsUntilReset(limit.unit, nowSeconds),
  });
}

function shadow(limit: EffectiveLimit, hits: number, status: DescriptorStatus): DescriptorStatus {
  if (limit.shadowMode && status.code === Code.OVER_LIMIT) {
    status.code = Code.OK;
    limit.stats.shadowMode.add(hits);
  }
  return status;
}

/** Decides one descriptor from the counter value after its increment (`after`). */
export function decide(
  limit: EffectiveLimit,
  hits: number,
  after: number,
  nowSeconds: number,
  options: DecideOptions,
): DescriptorStatus {
  const before = after - hits;
  const max = limit.requestsPerUnit;
  // The reference computes the threshold in 32-bit floats: floor(float32(limit) * float32(ratio)).
  const near = Math.floor(Math.fround(Math.fround(max) * Math.fround(options.nearLimitRatio)));
  const reset = secondsUntilReset(limit.unit, nowSeconds);
  if (after > max) {
    if (before >= max) {
      limit.stats.overLimit.add(hits);
    } else {
      limit.stats.overLimit.add(after - max);
      limit.stats.nearLimit.add(max - Math.max(near, before));
    }
    return shadow(limit, hits, {
      code: Code.OVER_LIMIT,
      currentLimit: currentLimit(limit),
      limitRemaining: 0,
      durationUntilResetSeconds: reset,
    });
  }
  if (after > near) limit.stats.nearLimit.add(before >= near ? hits : after - near);
  limit.stats.withinLimit.add(hits);
  return {
    code: Code.OK,
    currentLimit: currentLimit(limit),
    limitRemaining: max - after,
    durationUntilResetSeconds: reset,
  };
}

export interface ResponseOptions {
  /** `SHADOW_MODE`: an OVER_LIMIT overall code becomes OK. */
  readonly globalShadowMode: boolean;
  /** `QUOTA_MODE`: every descriptor is a quota descriptor. @default false */
  readonly globalQuotaMode?: boolean;
  /** `LIMIT_RESPONSE_HEADERS_ENABLED` header names, or undefined when disabled. */
  readonly headers: { limit: string; remaining: string; reset: string } | undefined;
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
  nowSeconds: number,
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
      { key: options.headers.reset, value: String(secondsUntilReset(closest.currentLimit.unit, nowSeconds)) },
    );
  }
  let globalShadowOverride = false;
  if (overall === Code.OVER_LIMIT && options.globalShadowMode) {
    overall = Code.OK;
    globalShadowOverride = true;
  }
  return {
    response: { overallCode: overall, statuses: out, responseHeadersToAdd: headers },
    globalShadowOverride,
    passed,
  };
}
