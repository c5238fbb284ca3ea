import { parseUnitName } from '../limiter/units.js';
import { UNIT_NAMES } from '../proto/messages.js';
import type { StatsRegistry } from '../stats/registry.js';
import { newRuleStats, type RuleStats } from './rule-stats.js';
import { parseConfigFile, type YamlDescriptor } from './yaml-file.js';

/**
 * The loaded rule tree: domains, nested descriptor nodes keyed `key_value` or `key`, and the limit
 * rules they hold. Built all-or-nothing from a set of files with the reference's validation rules
 * and messages (design/ratelimit-reference.md "Config"). No I/O: file texts and a stats registry in.
 */
export interface RateLimitRule {
  /** The stats key, e.g. `domain.key_value.subkey`. */
  readonly fullKey: string;
  readonly requestsPerUnit: number;
  /** `RateLimitResponse.RateLimit.Unit` number; 0 for an unlimited rule. */
  readonly unit: number;
  readonly unlimited: boolean;
  readonly shadowMode: boolean;
  readonly name: string;
  readonly replaces: readonly string[];
  readonly detailedMetric: boolean;
  readonly stats: RuleStats;
}

export interface WildcardChild {
  readonly key: string;
  readonly pattern: RegExp;
  readonly node: DescriptorNode;
}

export interface DescriptorNode {
  limit: RateLimitRule | undefined;
  readonly children: Map<string, DescriptorNode>;
  /** Children whose value contains `*`, in file order (first match wins). */
  readonly wildcards: WildcardChild[];
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
  return { limit: undefined, children: new Map(), wildcards: [] };
}

/** `*` matches any run of characters; everything else literally. */
export function wildcardPattern(value: string): RegExp {
  const body = value
    .split('*')
    .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
    .join('.*');
  return new RegExp(`^${body}$`, 's');
}

function buildRule(d: YamlDescriptor, fullKey: string, registry: StatsRegistry): RateLimitRule | undefined {
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
  return {
    fullKey,
    requestsPerUnit: rl.requestsPerUnit,
    unit: unit ?? 0,
    unlimited: rl.unlimited,
    shadowMode: d.shadowMode,
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
): void {
  for (const d of descriptors) {
    if (d.key === '') throw new RuleError('descriptor has empty key');
    const finalKey = d.value === '' ? d.key : `${d.key}_${d.value}`;
    const fullKey = parentKey + finalKey;
    if (parent.children.has(finalKey)) throw new RuleError(`duplicate descriptor composite key '${fullKey}'`);
    const node = emptyNode();
    node.limit = buildRule(d, fullKey, registry);
    loadDescriptors(node, `${fullKey}.`, d.descriptors, registry);
    parent.children.set(finalKey, node);
    if (d.value.includes('*')) parent.wildcards.push({ key: d.key, pattern: wildcardPattern(d.value), node });
  }
}

export interface BuildOptions {
  /** `MERGE_DOMAIN_CONFIG`: several files may hold the same domain. @default false */
  mergeDomainConfig: boolean;
}

/** Builds the whole config from every file, or returns the first error prefixed with its config name. */
export function buildConfig(
  files: readonly ConfigFile[],
  registry: StatsRegistry,
  options: BuildOptions,
): BuildResult {
  const domains = new Map<string, DescriptorNode>();
  for (const file of files) {
    const parsed = parseConfigFile(file.text);
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
      loadDescriptors(root, `${domain}.`, descriptors, registry);
    } catch (error) {
      if (error instanceof RuleError) return { ok: false, error: `${file.name}: ${error.message}` };
      throw error;
    }
  }
  return { ok: true, config: { domains } };
}

/** One line per rule with a `rate_limit` block, sorted (the debug server's `/rlconfig`). */
export function dumpConfig(config: RateLimitConfig): string {
  const lines: string[] = [];
  const walk = (node: DescriptorNode): void => {
    for (const child of node.children.values()) {
      const rule = child.limit;
      if (rule) {
        lines.push(
          `${rule.fullKey}: unit=${UNIT_NAMES[rule.unit]} requests_per_unit=${rule.requestsPerUnit}, shadow_mode: ${rule.shadowMode}`,
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
