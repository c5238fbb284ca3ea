import { parseUnitName, unitToDivider } from '../limiter/units.js';
import { UNIT_NAMES } from '../proto/messages.js';
import type { StatsRegistry } from '../stats/registry.js';
import {
  AlgorithmError,
  type AlgorithmSupport,
  algorithmDump,
  type RuleAlgorithm,
  ruleAlgorithm,
} from './algorithm.js';
import { newRuleStats, type RuleStats } from './rule-stats.js';
import { type MetadataValue, parseConfigFile, type YamlDescriptor } from './yaml-file.js';

/**
 * The loaded rule tree: domains, nested descriptor nodes keyed `key_value` or `key`, and the limit
 * rules they hold. Built all-or-nothing from a set of files with the reference's validation rules
 * and messages (design/ratelimit-reference.md "Config"). No I/O: file texts and a stats registry in.
 */
export interface RateLimitRule extends RuleAlgorithm {
  /** The stats key, e.g. `domain.key_value.subkey`. */
  readonly fullKey: string;
  readonly requestsPerUnit: number;
  /** `RateLimitResponse.RateLimit.Unit` number; 0 for an unlimited rule. */
  readonly unit: number;
  readonly unlimited: boolean;
  readonly shadowMode: boolean;
  /** `quota_mode`: an OVER_LIMIT of this rule blocks only when every quota descriptor of the request is over. */
  readonly quotaMode: boolean;
  readonly name: string;
  readonly replaces: readonly string[];
  readonly detailedMetric: boolean;
  readonly stats: RuleStats;
}

/** A child whose `key_value` contains `*`; matched against the request's whole `key_value`, as the reference. */
export interface WildcardChild {
  /** The child's `key_value` as configured, e.g. `path_/api/*`. */
  readonly key: string;
  /** `key` split on `*`. */
  readonly parts: readonly string[];
  readonly node: DescriptorNode;
}

export interface DescriptorNode {
  limit: RateLimitRule | undefined;
  readonly children: Map<string, DescriptorNode>;
  /** Children whose value contains `*`, in file order (first match wins). */
  readonly wildcards: WildcardChild[];
  /** The distinct `key`s of the children, in file order (the RLQS bucket walk, rlqs/bucket-mapping.ts). */
  readonly childKeys: string[];
  /** `value_to_metric`: stats keys use the request's value at this level. */
  readonly valueToMetric: boolean;
  /** `share_threshold`: every value matching this wildcard shares one counter and one stats key. */
  readonly shareThreshold: boolean;
  /** The configured `key_value` pattern when `share_threshold` is set, else ''. */
  readonly wildcardPattern: string;
  /** `metadata` of the descriptor (RESPONSE_DYNAMIC_METADATA). */
  readonly metadata: { readonly [key: string]: MetadataValue } | undefined;
}

export interface RateLimitConfig {
  readonly domains: ReadonlyMap<string, DescriptorNode>;
}

export interface ConfigFile {
  /** The config name: the file's path relative to the runtime directory, `/` replaced by `.`. */
  name: string;
  text: string;
}

export type BuildResult = { ok: true; config: RateLimitConfig } | { ok: false; error: string };

class RuleError extends Error {}

function emptyNode(): DescriptorNode {
  return {
    limit: undefined,
    children: new Map(),
    wildcards: [],
    childKeys: [],
    valueToMetric: false,
    shareThreshold: false,
    wildcardPattern: '',
    metadata: undefined,
  };
}

/**
 * The reference's `wildcardMatch`: each `*` of the pre-split pattern matches any run of characters
 * (also none); the literal parts must appear in order, the first at the start and the last at the end.
 */
export function wildcardMatch(parts: readonly string[], value: string): boolean {
  if (parts.length === 1) return parts[0] === value;
  const first = parts[0]!;
  const last = parts[parts.length - 1]!;
  if (!value.startsWith(first) || !value.endsWith(last)) return false;
  let fixed = 0;
  for (const p of parts) fixed += p.length;
  if (value.length < fixed) return false;
  let remaining = value.slice(first.length, value.length - last.length);
  for (let i = 1; i < parts.length - 1; i++) {
    const at = remaining.indexOf(parts[i]!);
    if (at < 0) return false;
    remaining = remaining.slice(at + parts[i]!.length);
  }
  return true;
}

function buildRule(
  d: YamlDescriptor,
  fullKey: string,
  registry: StatsRegistry,
  support: AlgorithmSupport | undefined,
): RateLimitRule | undefined {
  const rl = d.rateLimit;
  if (!rl) return undefined;
  const unit = parseUnitName(rl.unit);
  if (rl.unlimited) {
    if (unit !== undefined) throw new RuleError('should not specify rate limit unit when unlimited');
  } else if (unit === undefined) {
    throw new RuleError(`invalid rate limit unit '${rl.unit}'`);
  }
  for (const replaced of rl.replaces) {
    if (replaced === '') throw new RuleError('should not have an empty replaces entry');
    if (replaced === rl.name) throw new RuleError('replaces should not contain name of same descriptor');
  }
  let algorithm: RuleAlgorithm;
  try {
    algorithm = ruleAlgorithm(rl, fullKey, unitToDivider(unit ?? 0), support);
  } catch (error) {
    if (error instanceof AlgorithmError) throw new RuleError(error.message);
    throw error;
  }
  return {
    ...algorithm,
    fullKey,
    requestsPerUnit: rl.requestsPerUnit,
    unit: unit ?? 0,
    unlimited: rl.unlimited,
    shadowMode: d.shadowMode,
    quotaMode: d.quotaMode,
    name: rl.name,
    replaces: rl.replaces,
    detailedMetric: d.detailedMetric,
    stats: newRuleStats(registry, fullKey),
  };
}

function loadDescriptors(
  parent: DescriptorNode,
  parentKey: string,
  descriptors: readonly YamlDescriptor[],
  registry: StatsRegistry,
  support: AlgorithmSupport | undefined,
): void {
  for (const d of descriptors) {
    if (d.key === '') throw new RuleError('descriptor has empty key');
    const finalKey = d.value === '' ? d.key : `${d.key}_${d.value}`;
    const fullKey = parentKey + finalKey;
    if (parent.children.has(finalKey)) throw new RuleError(`duplicate descriptor composite key '${fullKey}'`);
    const limit = buildRule(d, fullKey, registry, support);
    const isWildcard = finalKey.includes('*');
    if (d.shareThreshold && !isWildcard) {
      throw new RuleError(
        `share_threshold can only be used with wildcard values (containing '*'), but found key '${finalKey}'`,
      );
    }
    const node: DescriptorNode = {
      ...emptyNode(),
      limit,
      valueToMetric: d.valueToMetric,
      shareThreshold: d.shareThreshold,
      wildcardPattern: d.shareThreshold ? finalKey : '',
      metadata: d.metadata,
    };
    if (isWildcard) parent.wildcards.push({ key: finalKey, parts: finalKey.split('*'), node });
    if (!parent.childKeys.includes(d.key)) parent.childKeys.push(d.key);
    loadDescriptors(node, `${fullKey}.`, d.descriptors, registry, support);
    parent.children.set(finalKey, node);
  }
}

export interface BuildOptions {
  /** `MERGE_DOMAIN_CONFIG`: several files may hold the same domain. @default false */
  mergeDomainConfig: boolean;
  /** The algorithms the backend can count; a rule asking for another one refuses the file. @default every one */
  algorithmSupport?: AlgorithmSupport | undefined;
}

/** Builds the whole config from every file, or returns the first error prefixed with its config name. */
export function buildConfig(
  files: readonly ConfigFile[],
  registry: StatsRegistry,
  options: BuildOptions,
): BuildResult {
  const domains = new Map<string, DescriptorNode>();
  for (const file of files) {
    let parsed: ReturnType<typeof parseConfigFile>;
    try {
      parsed = parseConfigFile(file.text);
    } catch (error) {
      return { ok: false, error: `${file.name}: error loading config file: ${(error as Error).message}` };
    }
    if (!parsed.ok) return { ok: false, error: `${file.name}: ${parsed.error}` };
    const { domain, descriptors } = parsed.root;
    try {
      if (domain === '') throw new RuleError('config file cannot have empty domain');
      let root = domains.get(domain);
      if (root && !options.mergeDomainConfig)
        throw new RuleError(`duplicate domain '${domain}' in config file`);
      if (!root) {
        root = emptyNode();
        domains.set(domain, root);
      }
      loadDescriptors(root, `${domain}.`, descriptors, registry, options.algorithmSupport);
    } catch (error) {
      if (error instanceof RuleError) return { ok: false, error: `${file.name}: ${error.message}` };
      // Never let a file take the process down: anything unexpected is this file's load error.
      return { ok: false, error: `${file.name}: ${(error as Error).message}` };
    }
  }
  return { ok: true, config: { domains } };
}

/** One line per rule with a `rate_limit` block in the reference's `dump` format, sorted (the debug server's `/rlconfig`). */
export function dumpConfig(config: RateLimitConfig): string {
  const lines: string[] = [];
  const walk = (node: DescriptorNode): void => {
    for (const child of node.children.values()) {
      const rule = child.limit;
      if (rule) {
        lines.push(
          `${rule.fullKey}: unit=${UNIT_NAMES[rule.unit]} requests_per_unit=${rule.requestsPerUnit}, shadow_mode: ${rule.shadowMode}, quota_mode: ${rule.quotaMode}${algorithmDump(rule)}`,
        );
      }
      walk(child);
    }
  };
  for (const root of config.domains.values()) walk(root);
  return lines
    .sort()
    .map((l) => `${l}\n`)
    .join('');
}
