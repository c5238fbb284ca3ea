import type { CallErrorCode } from '../errors.js';
import type { RateLimitRequest } from '../proto/messages.js';
import { UINT32_MAX } from '../proto/messages.js';
import type { RuleAlgorithm } from '../rules/algorithm.js';
import type { RateLimitConfig } from '../rules/config-tree.js';
import { descriptorToKey, matchDescriptor } from '../rules/matching.js';
import type { RuleStats } from '../rules/rule-stats.js';
import type { MetadataValue } from '../rules/yaml-file.js';
import { UNIT_SECOND, unitToDivider } from './units.js';

/**
 * Turning a request into the limits to check (reference service `constructLimitsToCheck` and the
 * cache-key generator): validation, matching, overrides, `replaces`, unlimited rules, hits and
 * cache keys. Pure: config, request and clock in; a plan out. Stats objects are looked up through
 * `statsFor` (the registry) but nothing is counted here except `domain_not_found`.
 */
export interface EffectiveLimit extends RuleAlgorithm {
  readonly requestsPerUnit: number;
  readonly unit: number;
  readonly name: string;
  readonly shadowMode: boolean;
  /** `quota_mode` of the rule (false for an override from the proxy). */
  readonly quotaMode: boolean;
  readonly stats: RuleStats;
}

export interface PlannedDescriptor {
  /** The limit to check with the backend; undefined for no limit, unlimited, or replaced. */
  limit: EffectiveLimit | undefined;
  unlimited: boolean;
  /**
   * Fixed window: `CACHE_KEY_PREFIX + domain + "_" + (key + "_" + value + "_")* + windowStart` (the
   * reference's); sliding window and token bucket: `CACHE_KEY_PREFIX + "{" + domain + "_" +
   * (key + "_" + value + "_")* + "}" + ("sw" | "tb") + windowSeconds`, one key per descriptor for
   * good (its state carries the time), hash-tagged so a Redis Cluster script may take it.
   * '' when no limit.
   */
  cacheKey: string;
  hits: number;
  /** Window length in seconds (`unit` x `unit_multiplier`; the base expiry of a fixed-window key). */
  divider: number;
  perSecond: boolean;
  /** The matched rule's `metadata` (RESPONSE_DYNAMIC_METADATA); undefined without a limit. */
  metadata: { readonly [key: string]: MetadataValue } | undefined;
  /** The matched rule's `name` ('' for none or an override), for `replaces`. */
  ruleName: string;
}

export type PlanResult =
  | { ok: true; descriptors: PlannedDescriptor[] }
  | { ok: false; code: CallErrorCode; message: string };

export interface PlanContext {
  readonly cacheKeyPrefix: string;
  statsFor(statKey: string): RuleStats;
  domainNotFound(domain: string): void;
}

/** Request-level checks that need no config (reference service messages, plus bad-input rules of our own). */
export function validateRequest(
  request: RateLimitRequest,
): { code: CallErrorCode; message: string } | undefined {
  if (request.domain === '') return { code: 'empty_domain', message: 'rate limit domain must not be empty' };
  if (request.descriptors.length === 0) {
    return { code: 'empty_descriptors', message: 'rate limit descriptor list must not be empty' };
  }
  for (let i = 0; i < request.descriptors.length; i++) {
    const d = request.descriptors[i]!;
    for (const entry of d.entries) {
      if (entry.key === '') {
        return {
          code: 'invalid_descriptor',
          message: `rate limit descriptor ${i} has an entry with an empty key`,
        };
      }
    }
    if (d.hitsAddend !== undefined && d.hitsAddend > UINT32_MAX) {
      return {
        code: 'invalid_descriptor',
        message: `rate limit descriptor ${i} hits_addend exceeds ${UINT32_MAX}`,
      };
    }
    if (d.limit && unitToDivider(d.limit.unit) === 0) {
      return {
        code: 'invalid_descriptor',
        message: `rate limit descriptor ${i} has a limit override with unit UNKNOWN`,
      };
    }
  }
  return undefined;
}

/** `sharedValues` (share_threshold): per entry, the wildcard value used instead of the request's. */
function cacheKey(
  prefix: string,
  request: RateLimitRequest,
  index: number,
  limit: EffectiveLimit,
  nowSeconds: number,
  sharedValues: readonly string[] | undefined,
): string {
  let key = `${request.domain}_`;
  const entries = request.descriptors[index]!.entries;
  for (let i = 0; i < entries.length; i++) {
    const entry = entries[i]!;
    key += `${entry.key}_${sharedValues?.[i] || entry.value}_`;
  }
  const window = limit.windowSeconds;
  switch (limit.algorithm) {
    case 'fixed_window':
      return prefix + key + Math.floor(nowSeconds / window) * window;
    case 'sliding_window':
      return `${prefix}{${key}}sw${window}`;
    case 'token_bucket':
      return `${prefix}{${key}}tb${window}`;
  }
}

function notCounted(hits: number, unlimited: boolean, ruleName: string): PlannedDescriptor {
  return {
    limit: undefined,
    unlimited,
    cacheKey: '',
    hits,
    divider: 0,
    perSecond: false,
    metadata: undefined,
    ruleName,
  };
}

/** Builds the plan for a validated request against one config snapshot. */
export function planRequest(
  config: RateLimitConfig,
  request: RateLimitRequest,
  nowSeconds: number,
  ctx: PlanContext,
): PlannedDescriptor[] {
  const n = request.descriptors.length;
  const out: PlannedDescriptor[] = new Array(n);
  let replacing: Set<string> | undefined;
  const defaultHits = Math.max(1, request.hitsAddend);

  for (let i = 0; i < n; i++) {
    const d = request.descriptors[i]!;
    const hits = d.hitsAddend ?? defaultHits;
    const match = matchDescriptor(config, request.domain, d);
    if (match.kind === 'domain_not_found') {
      ctx.domainNotFound(request.domain);
      out[i] = notCounted(hits, false, '');
      continue;
    }
    let limit: EffectiveLimit;
    let sharedValues: readonly string[] | undefined;
    let metadata: PlannedDescriptor['metadata'];
    let ruleName = '';
    if (d.limit) {
      // A limit override from the proxy replaces the configured rule; never shadow mode.
      limit = {
        requestsPerUnit: d.limit.requestsPerUnit,
        unit: d.limit.unit,
        algorithm: 'fixed_window',
        unitMultiplier: 1,
        burst: d.limit.requestsPerUnit,
        windowSeconds: unitToDivider(d.limit.unit),
        name: '',
        shadowMode: false,
        quotaMode: false,
        stats: ctx.statsFor(`${request.domain}.${descriptorToKey(d)}`),
      };
    } else if (match.kind !== 'rule') {
      out[i] = notCounted(hits, false, '');
      continue;
    } else {
      const rule = match.rule;
      ruleName = rule.name;
      if (rule.replaces.length > 0) {
        replacing ??= new Set();
        for (const r of rule.replaces) replacing.add(r);
      }
      if (rule.unlimited) {
        out[i] = notCounted(hits, true, ruleName);
        continue;
      }
      limit = match.statKey ? { ...rule, stats: ctx.statsFor(match.statKey) } : rule;
      sharedValues = match.sharedValues;
      metadata = match.metadata;
    }
    out[i] = {
      limit,
      unlimited: false,
      cacheKey: cacheKey(ctx.cacheKeyPrefix, request, i, limit, nowSeconds, sharedValues),
      hits,
      divider: limit.windowSeconds,
      perSecond: limit.unit === UNIT_SECOND,
      metadata,
      ruleName,
    };
  }

  // `replaces`: a rule named by another matched rule of the request is neither counted nor unlimited.
  if (replacing) {
    for (let i = 0; i < n; i++) {
      const p = out[i]!;
      if (p.ruleName !== '' && replacing.has(p.ruleName)) out[i] = notCounted(p.hits, false, p.ruleName);
    }
  }
  return out;
}
