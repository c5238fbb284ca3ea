import { ApiError } from '../errors.js';
import type { RequestLimitsOptions } from '../limits/register.js';
import { isExempt, rulesFor } from '../limits/rules.js';

/**
 * The request limits of a REST route for an operation over the feed (operations.ts): the route's
 * rules per client address and per API key (config/limits.yaml, `private`), counted in the same
 * limiter as the HTTP requests, so an order costs the same budget either way. Resolves with the
 * refusal, or undefined to go on (also when no limits are configured).
 */
export function operationLimits(
  options: RequestLimitsOptions | undefined,
): (route: string, address: string, keyId: number) => Promise<ApiError | undefined> {
  if (!options) return async () => undefined;
  const { config, limiter } = options;
  const failureMode = options.failureMode ?? 'open';
  const byAddress = rulesFor(config, 'private', 'address');
  const byKey = rulesFor(config, 'private', 'key');
  return async (route, address, keyId) => {
    if (isExempt(config, route)) return undefined;
    const checks = [
      ...byAddress.map((rule) => ({ rule, subject: address })),
      ...byKey.map((rule) => ({ rule, subject: String(keyId) })),
    ];
    if (checks.length === 0) return undefined;
    const outcome = await limiter.check(checks);
    if (outcome.kind === 'failed')
      return failureMode === 'open'
        ? undefined
        : new ApiError('unavailable', 'request limits cannot be checked at the moment; retry shortly');
    for (const [index, verdict] of outcome.verdicts.entries()) {
      if (!verdict || verdict.allowed) continue;
      const rule = checks[index]!.rule;
      return new ApiError(
        'rate_limited',
        `more than ${verdict.limit} requests per ${verdict.windowSeconds} s ${rule.per === 'key' ? 'with this API key' : 'from this address'} ` +
          `(rule ${rule.name}); retry after ${verdict.resetSeconds} s`,
      );
    }
    return undefined;
  };
}
