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
 * `statsFor` of the decision paths (ShouldRateLimit and RLQS): the counters of a stats key other
 * than the rule's own (detailed_metric, value_to_metric), made once per key.
 */
export function ruleStatsCache(registry: StatsRegistry): (statKey: string) => RuleStats {
  const cache = new Map<string, RuleStats>();
  return (statKey) => {
    let stats = cache.get(statKey);
    if (!stats) {
      stats = newRuleStats(registry, statKey);
      cache.set(statKey, stats);
    }
    return stats;
  };
}
