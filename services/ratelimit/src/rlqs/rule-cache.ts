import type { EffectiveLimit } from '../limiter/plan.js';
import type { RateLimitConfig } from '../rules/config-tree.js';

/** What a bucket id matched in one config: its limit, rule counter and shadow mode. */
export interface BucketRule {
  readonly limit: EffectiveLimit | undefined;
  /** The rule counter (`CACHE_KEY_PREFIX{rlqs_<domain>_<k>_<v>_...}`); undefined without a limit. */
  readonly counterKey: string | undefined;
  readonly shadow: boolean;
  /** No file holds the bucket's domain (counted at every match, as ShouldRateLimit counts it). */
  readonly domainNotFound: boolean;
}

/**
 * The rule matches of bucket ids across every stream of a server, for the config they were
 * matched in: 1,000 Envoys report the same buckets, and a fleet reconnecting (a restart, a
 * deploy) makes each of them new on every stream at once. Keyed by the stream's bucket key
 * (domain and canonical id); a new config (a reload) empties it. Bounded: emptied when full.
 */
export class RuleCache {
  private config: RateLimitConfig | undefined;
  private readonly rules = new Map<string, BucketRule>();

  constructor(private readonly maxEntries = 100_000) {}

  ruleOf(config: RateLimitConfig, id: string, match: () => BucketRule): BucketRule {
    if (config !== this.config) {
      this.config = config;
      this.rules.clear();
    }
    let rule = this.rules.get(id);
    if (rule === undefined) {
      rule = match();
      if (this.rules.size >= this.maxEntries) this.rules.clear();
      this.rules.set(id, rule);
    }
    return rule;
  }
}
