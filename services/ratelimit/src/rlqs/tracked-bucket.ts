import type { EffectiveLimit } from '../limiter/plan.js';
import type { RateLimitConfig } from '../rules/config-tree.js';
import type { RuleStats } from '../rules/rule-stats.js';
import { type QuotaState, windowStartMs } from './assignment.js';
import { matchBucket } from './bucket-mapping.js';
import type { BucketId, Strategy } from './protos.js';

/**
 * One bucket one stream reported: its rule (matched again after every reload), the rule counter it
 * shares with every other participant, the last shared state seen and what was last sent. Pure
 * bookkeeping; the quota service owns the instances.
 */
export interface TrackedBucket {
  readonly domain: string;
  readonly bucketId: BucketId;
  /** The stream's key of this bucket (domain and canonical bucket id). */
  readonly id: string;
  /** The bucket_id bytes as Envoy first sent them (latin1): echoed in every answer. */
  readonly idBytes: string;
  /**
   * Spellings of the id (wire bytes) other than `idBytes` that the stream's `byWire` index holds
   * for it (Envoy sends one: undefined, no array per bucket).
   */
  otherWireIds: string[] | undefined;
  /** `<stream id>.<bucket number>`: this participant in the shared state. */
  readonly member: string;
  /** The config the rule below was matched in. */
  config: RateLimitConfig | undefined;
  limit: EffectiveLimit | undefined;
  /** The rule counter (`CACHE_KEY_PREFIX{rlqs_<domain>_<k>_<v>_...}`); undefined without a limit. */
  counterKey: string | undefined;
  /** The rule's shadow_mode, or SHADOW_MODE. */
  shadow: boolean;
  lastReportMs: number;
  /** The last report with requests in it (allowed or denied), or the first report. */
  lastUsageMs: number;
  state: QuotaState;
  /** The clock reading of the backend call `state` came from (an older pushed state is not applied). */
  stateAt: number;
  /** What was last sent; undefined before the first assignment. */
  sent: Strategy | undefined;
  /** DENY_ALL by the window cap: until this ms (the window's end); 0 when not capped. */
  cappedUntilMs: number;
}

/**
 * A bucket id as one string, whatever the order of its map: `domain` then sorted `key=value` pairs;
 * undefined for an id Envoy's proto does not allow (no pair, or an empty key or value).
 *
 * Most ids have one pair: `<domain length>:<domain><key length>:<key><value>` (the lengths make it
 * unambiguous; no array or JSON for it), several pairs JSON (starts with `[`, so the two never meet).
 */
export function bucketKey(domain: string, bucket: BucketId): string | undefined {
  const keys = Object.keys(bucket);
  for (let i = 0; i < keys.length; i++) if (keys[i] === '' || bucket[keys[i]!] === '') return undefined;
  if (keys.length === 1) {
    const k = keys[0]!;
    return `${domain.length}:${domain}${k.length}:${k}${bucket[k]}`;
  }
  if (keys.length === 0) return undefined;
  return JSON.stringify([domain, ...keys.sort().map((k) => [k, bucket[k]])]);
}

export interface MatchContext {
  readonly cacheKeyPrefix: string;
  readonly globalShadowMode: boolean;
  statsFor(statKey: string): RuleStats;
  domainNotFound(domain: string): void;
}

/** (Re)matches the bucket's rule in `config`; returns the counter key it had before. */
export function rematch(
  t: TrackedBucket,
  config: RateLimitConfig | undefined,
  ctx: MatchContext,
): string | undefined {
  const before = t.counterKey;
  t.config = config;
  t.limit = undefined;
  t.counterKey = undefined;
  t.shadow = ctx.globalShadowMode;
  if (!config) return before;
  const { descriptor, match } = matchBucket(config, t.domain, t.bucketId);
  if (match.kind === 'domain_not_found') ctx.domainNotFound(t.domain);
  if (match.kind !== 'rule' || match.rule.unlimited) return before;
  const rule = match.rule;
  t.limit = match.statKey ? { ...rule, stats: ctx.statsFor(match.statKey) } : rule;
  t.shadow = ctx.globalShadowMode || rule.shadowMode;
  let key = `${ctx.cacheKeyPrefix}{rlqs_${t.domain}_`;
  const entries = descriptor.entries;
  const shared = match.sharedValues;
  for (let i = 0; i < entries.length; i++) {
    const e = entries[i]!;
    key += `${e.key}_${shared?.[i] || e.value}_`;
  }
  t.counterKey = `${key}}`;
  return before;
}

/** The end (ms) of the window the cap of `t`'s rule counts in. */
export function windowEndMs(t: TrackedBucket, nowMs: number): number {
  const w = t.limit?.windowSeconds ?? 1;
  return windowStartMs(nowMs, w) + w * 1000;
}
