import type { Counter, StatsRegistry } from '../stats/registry.js';
import { sanitizeStatName } from '../stats/sanitize.js';

/** The per-rule counters `ratelimit.service.rate_limit.<statKey>.<stat>` (reference "Stats names"). */
export interface RuleStats {
  readonly totalHits: Counter;
  readonly overLimit: Counter;
  readonly nearLimit: Counter;
  readonly withinLimit: Counter;
  readonly overLimitWithLocalCache: Counter;
  readonly shadowMode: Counter;
}

export function newRuleStats(registry: StatsRegistry, statKey: string): RuleStats {
  const base = `ratelimit.service.rate_limit.${sanitizeStatName(statKey)}.`;
  return {
    totalHits: registry.counter(`${base}total_hits`),
    overLimit: registry.counter(`${base}over_limit`),
    nearLimit: registry.counter(`${base}near_limit`),
    withinLimit: registry.counter(`${base}within_limit`),
    overLimitWithLocalCache: registry.counter(`${base}over_limit_with_local_cache`),
    shadowMode: registry.counter(`${base}shadow_mode`),
  };
}

/**
 * The statistics key that requests share once `STATS_MAX_DYNAMIC_KEYS` keys were made from request
 * values: `ratelimit.service.rate_limit._overflow.<stat>`.
 */
export const OVERFLOW_STAT_KEY = '_overflow';

/**
 * Statistics made once per key from request values, at most the registry's `maxDynamicKeys` of
 * them: a caller could otherwise make one per request, and the registry, the statsd flush and the
 * Prometheus page grew with every value. Past the bound a new key gets what `make` gives for
 * `OVERFLOW_STAT_KEY` (made once), counted in `ratelimit.service.stats_keys_overflow`.
 */
function boundedStats<T>(registry: StatsRegistry, make: (statKey: string) => T): (statKey: string) => T {
  const cache = new Map<string, T>();
  let overflow: T | undefined;
  const folded = registry.counter('ratelimit.service.stats_keys_overflow');
  return (statKey) => {
    let stats = cache.get(statKey);
    if (stats === undefined) {
      if (cache.size >= registry.maxDynamicKeys) {
        folded.inc();
        overflow ??= make(OVERFLOW_STAT_KEY);
        return overflow;
      }
      stats = make(statKey);
      cache.set(statKey, stats);
    }
    return stats;
  };
}

/**
 * `statsFor` of the decision paths (ShouldRateLimit and RLQS): the counters of a stats key other
 * than the rule's own (a descriptor's `limit` override, detailed_metric, value_to_metric), made
 * once per key, bounded (`boundedStats`).
 */
export function ruleStatsCache(registry: StatsRegistry): (statKey: string) => RuleStats {
  return boundedStats(registry, (statKey) => newRuleStats(registry, statKey));
}

/**
 * `ratelimit.service.rate_limit.<domain>.domain_not_found` of a request's unknown domain, within the
 * same bound as `ruleStatsCache` (then `_overflow.domain_not_found`).
 */
export function domainNotFoundCounters(registry: StatsRegistry): (domain: string) => Counter {
  return boundedStats(registry, (domain) =>
    registry.counter(`ratelimit.service.rate_limit.${sanitizeStatName(domain)}.domain_not_found`),
  );
}
