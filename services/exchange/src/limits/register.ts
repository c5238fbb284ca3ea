import type { FastifyBaseLogger, FastifyReply, FastifyRequest } from 'fastify';
import { isSignedRequestHook } from '../auth/authenticate.js';
import { ApiError } from '../errors.js';
import type { App } from '../http/typed.js';
import type { RuleVerdict } from './fixed-window.js';
import type { LimitOutcome, RequestLimiter } from './limiter.js';
import { isExempt, type LimitRule, type LimitsConfig, type RouteClass, rulesFor } from './rules.js';

/**
 * Request limits at the HTTP edge. Per client address (`request.ip`, see `TRUSTED_PROXIES`) in
 * onRequest, before the body is read or a signature checked; per API key in preHandler, once the
 * route's authentication has passed. Every answer carries the headers of the tightest rule
 * (`x-ratelimit-limit`, `-remaining`, `-reset`, as Envoy's rate-limit filter sends them); a refusal
 * is 429 `rate_limited` with `retry-after`.
 */

/** What to do when the limiter cannot answer (services/ratelimit down or slow). */
export type FailureMode = 'open' | 'closed';

export interface RequestLimitsOptions {
  readonly config: LimitsConfig;
  readonly limiter: RequestLimiter;
  /** `open`: let the request through unlimited; `closed`: answer 503 `unavailable`. @default 'open' */
  readonly failureMode?: FailureMode;
}

type LimitClass = RouteClass | 'exempt';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Set for every route when request limits are on (onRoute below). */
    limitClass?: LimitClass;
  }
  interface FastifyRequest {
    /** The verdict closest to its limit among the rules counted so far for this request. */
    limitVerdict?: RuleVerdict;
  }
}

/** Refused first (longest wait), then least remaining, then soonest reset. */
function tighter(a: RuleVerdict | undefined, b: RuleVerdict): RuleVerdict {
  if (!a) return b;
  if (a.allowed !== b.allowed) return a.allowed ? b : a;
  if (!a.allowed) return b.resetSeconds > a.resetSeconds ? b : a;
  if (a.remaining !== b.remaining) return b.remaining < a.remaining ? b : a;
  return b.resetSeconds < a.resetSeconds ? b : a;
}

function setHeaders(reply: FastifyReply, verdict: RuleVerdict): void {
  void reply.header('x-ratelimit-limit', `${verdict.limit}, ${verdict.limit};w=${verdict.windowSeconds}`);
  void reply.header('x-ratelimit-remaining', String(verdict.remaining));
  void reply.header('x-ratelimit-reset', String(verdict.resetSeconds));
}

function subjectText(rule: LimitRule): string {
  return rule.per === 'key' ? 'with this API key' : 'from this address';
}

/** Logs limiter failures at most every 10 s (an outage would otherwise log every request). */
class FailureLog {
  private lastLogged = 0;
  private suppressed = 0;
  note(log: FastifyBaseLogger, outcome: Extract<LimitOutcome, { kind: 'failed' }>, mode: FailureMode): void {
    const now = Date.now();
    if (now - this.lastLogged < 10_000) {
      this.suppressed += 1;
      return;
    }
    log.warn(
      { reason: outcome.reason, detail: outcome.message, failureMode: mode, suppressed: this.suppressed },
      mode === 'open'
        ? 'request limiter failed: request let through unlimited (fail-open)'
        : 'request limiter failed: request refused (fail-closed)',
    );
    this.lastLogged = now;
    this.suppressed = 0;
  }
}

/** Registers the hooks; call before the routes are added (classification happens in onRoute). */
export function registerRequestLimits(app: App, options: RequestLimitsOptions): void {
  const { config, limiter } = options;
  const failureMode = options.failureMode ?? 'open';
  const failures = new FailureLog();

  app.addHook('onRoute', (route) => {
    const hooks = Array.isArray(route.preValidation) ? route.preValidation : [route.preValidation];
    const limitClass: LimitClass = isExempt(config, route.url)
      ? 'exempt'
      : hooks.some(isSignedRequestHook)
        ? 'private'
        : 'public';
    route.config = { ...route.config, limitClass };
  });

  async function enforce(
    request: FastifyRequest,
    reply: FastifyReply,
    rules: readonly LimitRule[],
    subject: string,
  ): Promise<void> {
    if (rules.length === 0) return;
    const outcome = await limiter.check(rules.map((rule) => ({ rule, subject })));
    if (outcome.kind === 'failed') {
      failures.note(request.log, outcome, failureMode);
      if (failureMode === 'open') return;
      void reply.header('retry-after', '1');
      throw new ApiError('unavailable', 'request limits cannot be checked at the moment; retry shortly');
    }
    let refused: RuleVerdict | undefined;
    for (const verdict of outcome.verdicts) {
      if (!verdict) continue;
      request.limitVerdict = tighter(request.limitVerdict, verdict);
      if (!verdict.allowed) refused = tighter(refused, verdict);
    }
    if (request.limitVerdict) setHeaders(reply, request.limitVerdict);
    if (refused) {
      void reply.header('retry-after', String(refused.resetSeconds));
      throw new ApiError(
        'rate_limited',
        `more than ${refused.limit} requests per ${refused.windowSeconds} s ${subjectText(refused.rule)} ` +
          `(rule ${refused.rule.name}); retry after ${refused.resetSeconds} s`,
      );
    }
  }

  const classOf = (request: FastifyRequest): LimitClass => request.routeOptions.config.limitClass ?? 'public';

  app.addHook('onRequest', async (request, reply) => {
    const limitClass = classOf(request);
    if (limitClass === 'exempt') return;
    await enforce(request, reply, rulesFor(config, limitClass, 'address'), request.ip);
  });
  app.addHook('preHandler', async (request, reply) => {
    if (!request.auth || classOf(request) !== 'private') return;
    await enforce(request, reply, rulesFor(config, 'private', 'key'), String(request.auth.keyId));
  });
  app.addHook('onClose', async () => {
    await limiter.close();
  });
}
