import type { CallErrorCode } from '../errors.js';
import type { RateLimitRequest } from '../proto/messages.js';
import { UINT32_MAX } from '../proto/messages.js';
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
export interface EffectiveLimit {
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
  /** `CACHE_KEY_PREFIX + domain + "_" + (key + "_" + value + "_")* + windowStart`; '' when no limit. */
  cacheKey: string;
  hits: number;
  /** Window length in seconds (the base expiry of the key). */
  divider: number;
  perSecond: boolean;
  /** The matched rule's `metadata` (RESPONSE_DYNAMIC_METADATA); undefined without a limit. */
  metadata: { readonly [key: string]: MetadataValue } | undefined;
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
  divider: number,
  nowSeconds: number,
  sharedValues: readonly string[] | undefined,
): string {
  let key = `${prefix}${request.domain}_`;
  const entries = request.descriptors[index]!.entries;
  for (let i = 0; i < entries.length; i++) {
    const entry = entries[i]!;
    key += `${entry.key}_${sharedValues?.[i] || entry.value}_`;
  }
  return key + Math.floor(nowSeconds / divider) * divider;
}

/** Builds the plan for a validated request against one config snapshot. */
export function planRequest(
  config: RateLimitConfig,
  request: RateLimitRequest,
  nowSeconds: number,
  ctx: PlanContext,
): PlannedDescriptor[] {
  const n = request.descriptors.length;
  const limits: (EffectiveLimit | undefined)[] = new Array(n);
  const shared: (readonly string[] | undefined)[] = new Array(n);
  const metadata: ({ readonly [key: string]: MetadataValue } | undefined)[] = new Array(n);
  const names: string[] = new Array(n);
  const unlimited: boolean[] = new Array(n).fill(false);
  let replacing: Set<string> | undefined;
  const defaultHits = Math.max(1, request.hitsAddend);

  for (let i = 0; i < n; i++) {
    const d = request.descriptors[i]!;
    const match = matchDescriptor(config, request.domain, d);
    names[i] = '';
    if (match.kind === 'domain_not_found') {
      ctx.domainNotFound(request.domain);
      continue;
    }
    if (d.limit) {
      // A limit override from the proxy replaces the configured rule; never shadow mode.
      limits[i] = {
        requestsPerUnit: d.limit.requestsPerUnit,
        unit: d.limit.unit,
        name: '',
        shadowMode: false,
        quotaMode: false,
        stats: ctx.statsFor(`${request.domain}.${descriptorToKey(d)}`),
      };
      continue;
    }
    if (match.kind !== 'rule') continue;
    const rule = match.rule;
    names[i] = rule.name;
    if (rule.replaces.length > 0) {
      replacing ??= new Set();
      for (const r of rule.replaces) replacing.add(r);
    }
    if (rule.unlimited) {
      unlimited[i] = true;
      continue;
    }
    limits[i] = match.statKey ? { ...rule, stats: ctx.statsFor(match.statKey) } : rule;
    shared[i] = match.sharedValues;
    metadata[i] = match.metadata;
  }

  const out: PlannedDescriptor[] = new Array(n);
  for (let i = 0; i < n; i++) {
    const d = request.descriptors[i]!;
    let limit = limits[i];
    let isUnlimited = unlimited[i]!;
    if (replacing && names[i] !== '' && replacing.has(names[i]!)) {
      limit = undefined;
      isUnlimited = false;
    }
    const hits = d.hitsAddend ?? defaultHits;
    if (!limit) {
      out[i] = {
        limit: undefined,
        unlimited: isUnlimited,
        cacheKey: '',
        hits,
        divider: 0,
        perSecond: false,
        metadata: undefined,
      };
      continue;
    }
    const divider = unitToDivider(limit.unit);
    out[i] = {
      limit,
      unlimited: false,
      cacheKey: cacheKey(ctx.cacheKeyPrefix, request, i, divider, nowSeconds, shared[i]),
      hits,
      divider,
      perSecond: limit.unit === UNIT_SECOND,
      metadata: metadata[i],
    };
  }
  return out;
}
