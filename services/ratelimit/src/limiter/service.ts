import type { Logger } from 'pino';
import { InvalidKeyError } from '../backends/types.js';
import { BACKEND_ERROR_MESSAGE, type CallError, errorStat } from '../errors.js';
import { RepeatedErrorLog } from '../logging/repeated-error.js';
import {
  Code,
  type DescriptorStatus,
  type RateLimitRequest,
  type RateLimitResponse,
} from '../proto/messages.js';
import type { RateLimitConfig } from '../rules/config-tree.js';
import { domainNotFoundCounters, ruleStatsCache } from '../rules/rule-stats.js';
import type { FailureMode } from '../settings/backend.js';
import type { Counter, StatsRegistry } from '../stats/registry.js';
import { assembleResponse, type ResponseOptions } from './decide.js';
import { dynamicMetadata } from './dynamic-metadata.js';
import { type PlanContext, type PlannedDescriptor, planRequest, validateRequest } from './plan.js';
import type { RateLimiter } from './rate-limiter.js';

/**
 * The ShouldRateLimit operation shared by the gRPC and HTTP transports: validate, plan against the
 * current config snapshot, count with the limiter, assemble the response, count errors.
 * Failures are values (`{ok: false, error}`); transports map them to their status codes.
 */
export type CallResult = { ok: true; response: RateLimitResponse } | { ok: false; error: CallError };

export interface RateLimitServiceOptions extends ResponseOptions {
  limiter: RateLimiter;
  registry: StatsRegistry;
  cacheKeyPrefix: string;
  /** The config in force right now (undefined until the first load succeeds). */
  currentConfig: () => RateLimitConfig | undefined;
  /** Seconds since the epoch (integer); unused when `nowMs` is given. */
  nowSeconds: () => number;
  /** Milliseconds since the epoch: the clock of the sliding window and the token bucket. @default nowSeconds x 1000 */
  nowMs?: () => number;
  failureMode: FailureMode;
  logger: Logger;
  /** `RESPONSE_DYNAMIC_METADATA`. @default false */
  responseDynamicMetadata?: boolean;
}

export class RateLimitService {
  private readonly errorCounters: Record<'service_error' | 'redis_error', Counter>;
  private readonly globalShadow: Counter;
  private readonly planContext: PlanContext;
  private readonly backendErrorLog: RepeatedErrorLog;

  constructor(private readonly options: RateLimitServiceOptions) {
    const r = options.registry;
    this.backendErrorLog = new RepeatedErrorLog(options.logger, 'rate limit backend call failed');
    this.errorCounters = {
      service_error: r.counter('ratelimit.service.call.should_rate_limit.service_error'),
      redis_error: r.counter('ratelimit.service.call.should_rate_limit.redis_error'),
    };
    this.globalShadow = r.counter('ratelimit.service.global_shadow_mode');
    const domainNotFound = domainNotFoundCounters(r);
    this.planContext = {
      cacheKeyPrefix: options.cacheKeyPrefix,
      statsFor: ruleStatsCache(r),
      domainNotFound: (domain) => {
        domainNotFound(domain).inc();
        this.warnUnknownDomain(domain);
      },
    };
  }

  /** Domains already warned about; bounded so that callers inventing domains cannot grow it. */
  private readonly warnedDomains = new Set<string>();

  /**
   * A request for a domain no configuration has is answered OK (as upstream does), which hides a
   * typo in the client's domain: the first request of each such domain is logged at warn.
   */
  private warnUnknownDomain(domain: string): void {
    if (this.warnedDomains.has(domain) || this.warnedDomains.size >= 1_000) return;
    this.warnedDomains.add(domain);
    this.options.logger.warn(
      { domain },
      `unknown rate limit domain '${domain}': no configuration has it, so its requests are answered OK (logged once per domain)`,
    );
  }

  private fail(error: CallError): CallResult {
    this.errorCounters[errorStat(error.code)].inc();
    return { ok: false, error };
  }

  /**
   * The call's result: a value when it needed no round trip (in-process store, or no limit to
   * count), else a promise. Never throws for a backend failure: that becomes `failureMode`'s answer.
   */
  shouldRateLimit(request: RateLimitRequest): CallResult | Promise<CallResult> {
    const invalid = validateRequest(request);
    if (invalid) return this.fail(invalid);
    const config = this.options.currentConfig();
    if (!config) return this.fail({ code: 'no_config', message: 'no rate limit configuration loaded' });
    // One clock read for both figures, so a call never straddles a second between them.
    const nowMs = this.options.nowMs ? this.options.nowMs() : this.options.nowSeconds() * 1000;
    const now = this.options.nowMs ? Math.floor(nowMs / 1000) : nowMs / 1000;
    const plan = planRequest(config, request, now, this.planContext);
    let counted: ReturnType<RateLimiter['doLimit']>;
    try {
      counted = this.options.limiter.doLimit(plan, now, nowMs);
    } catch (error) {
      return this.backendFailed(request, error);
    }
    if (counted instanceof Promise) {
      return counted.then(
        (statuses) => this.respond(request, plan, statuses),
        (error: unknown) => this.backendFailed(request, error),
      );
    }
    return this.respond(request, plan, counted);
  }

  private respond(
    request: RateLimitRequest,
    plan: readonly PlannedDescriptor[],
    statuses: readonly DescriptorStatus[],
  ): CallResult {
    const { response, globalShadowOverride, passed } = assembleResponse(plan, statuses, this.options);
    if (globalShadowOverride) this.globalShadow.inc();
    if (this.options.responseDynamicMetadata)
      response.dynamicMetadata = dynamicMetadata(request, plan, passed);
    return { ok: true, response };
  }

  /** The backend could not count: an invalid key fails the call, else `BACKEND_FAILURE_MODE` answers. */
  private backendFailed(request: RateLimitRequest, error: unknown): CallResult {
    if (error instanceof InvalidKeyError)
      return this.fail({ code: 'invalid_descriptor', message: error.message });
    this.backendErrorLog.report(error);
    const failed = this.fail({ code: 'backend', message: BACKEND_ERROR_MESSAGE });
    if (this.options.failureMode === 'error') return failed;
    const code = this.options.failureMode === 'allow' ? Code.OK : Code.OVER_LIMIT;
    return {
      ok: true,
      response: {
        overallCode: code,
        statuses: request.descriptors.map(() => ({ code, limitRemaining: 0 })),
        responseHeadersToAdd: [],
      },
    };
  }
}
