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
 * `statsFor` of the decision paths (ShouldRateLimit and RLQS): the counters of a stats key other
 * than the rule's own (a descriptor's `limit` override, detailed_metric, value_to_metric), made
 * once per key. These keys hold request values, so a caller could make one per request: past the
 * registry's `maxDynamicKeys` a new key counts under `OVERFLOW_STAT_KEY` (counted in
 * `ratelimit.service.stats_keys_overflow`), where the registry, the statsd flush and the Prometheus
 * page had grown with every value.
 */
export function ruleStatsCache(registry: StatsRegistry): (statKey: string) => RuleStats {
  const cache = new Map<string, RuleStats>();
  let overflow: RuleStats | undefined;
  const folded = registry.counter('ratelimit.service.stats_keys_overflow');
  return (statKey) => {
    let stats = cache.get(statKey);
    if (!stats) {
      if (cache.size >= registry.maxDynamicKeys) {
        folded.inc();
        overflow ??= newRuleStats(registry, OVERFLOW_STAT_KEY);
        return overflow;
      }
      stats = newRuleStats(registry, statKey);
      cache.set(statKey, stats);
    }
    return stats;
  };
}

/**
 * `ratelimit.service.rate_limit.<domain>.domain_not_found` of a request's unknown domain, within the
 * same bound as `ruleStatsCache` (then `_overflow.domain_not_found`).
 */
export function domainNotFoundCounters(registry: StatsRegistry): (domain: string) => Counter {
  const cache = new Map<string, Counter>();
  const folded = registry.counter('ratelimit.service.stats_keys_overflow');
  return (domain) => {
    let counter = cache.get(domain);
    if (!counter) {
      if (cache.size >= registry.maxDynamicKeys) {
        folded.inc();
        return registry.counter(`ratelimit.service.rate_limit.${OVERFLOW_STAT_KEY}.domain_not_found`);
      }
      counter = registry.counter(`ratelimit.service.rate_limit.${sanitizeStatName(domain)}.domain_not_found`);
      cache.set(domain, counter);
    }
    return counter;
  };
}
