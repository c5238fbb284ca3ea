import type { RequestDescriptor } from '../proto/messages.js';
import {
  type DescriptorNode,
  type RateLimitConfig,
  type RateLimitRule,
  wildcardMatch,
} from './config-tree.js';
import type { MetadataValue } from './yaml-file.js';

/**
 * Finding the rule for one request descriptor, as the reference's `GetLimit` (config_impl.go): for
 * entry i try the exact `key_value` child, else the first wildcard child whose `key_value` pattern
 * matches the request's `key_value`, else the bare `key` child; the limit applies only when the node
 * matched by the last entry holds one. Also the stats key (`detailed_metric`, `value_to_metric`,
 * `share_threshold`) and the shared cache-key values of `share_threshold`.
 * Pure: config tree and descriptor in, rule out.
 */
export type MatchResult =
  | { kind: 'domain_not_found' }
  | { kind: 'no_limit' }
  | {
      kind: 'rule';
      rule: RateLimitRule;
      /** The stats key when it differs from the rule's own `fullKey`. */
      statKey: string | undefined;
      /** Per entry index, the wildcard value that replaces the request's value in the cache key (share_threshold). */
      sharedValues: readonly string[] | undefined;
      metadata: { readonly [key: string]: MetadataValue } | undefined;
    };

/** `key_value.key2_value2...` from the request entries (value part only when non-empty). */
export function descriptorToKey(descriptor: RequestDescriptor): string {
  let out = '';
  for (const entry of descriptor.entries) {
    if (out !== '') out += '.';
    out += entry.key;
    if (entry.value !== '') out += `_${entry.value}`;
  }
  return out;
}

function trimPrefix(text: string, prefix: string): string {
  return text.startsWith(prefix) ? text.slice(prefix.length) : text;
}

/**
 * The `value_to_metric` stats key's segments for entries `0..upTo-1`, every one of them matched
 * exactly or by bare key with no `value_to_metric`: each segment is then the matched node's own key.
 */
function plainMetricPrefix(
  root: DescriptorNode,
  domain: string,
  entries: RequestDescriptor['entries'],
  upTo: number,
): string {
  let key = domain;
  let node = root;
  for (let i = 0; i < upTo; i++) {
    const entry = entries[i]!;
    const keyValue = `${entry.key}_${entry.value}`;
    const byValue = node.children.get(keyValue);
    key += byValue ? `.${keyValue}` : `.${entry.key}`;
    node = (byValue ?? node.children.get(entry.key))!;
  }
  return key;
}

export function matchDescriptor(
  config: RateLimitConfig,
  domain: string,
  descriptor: RequestDescriptor,
): MatchResult {
  const root = config.domains.get(domain);
  if (!root) return { kind: 'domain_not_found' };
  let node: DescriptorNode = root;
  let rule: RateLimitRule | undefined;
  let metadata: { readonly [key: string]: MetadataValue } | undefined;
  // The value_to_metric key is the rule's own `fullKey` while every entry matches exactly or by bare
  // key without value_to_metric (the usual case): it is only built from the first entry where it may
  // differ (a wildcard, value_to_metric, share_threshold), so most calls build no string here.
  let valueToMetricKey: string | undefined;
  let shared: Map<number, string> | undefined;
  const entries = descriptor.entries;
  for (let i = 0; i < entries.length; i++) {
    const entry = entries[i]!;
    const keyValue = `${entry.key}_${entry.value}`;
    let next = node.children.get(keyValue);
    let wildcardKey = '';
    if (next === undefined) {
      for (const w of node.wildcards) {
        if (wildcardMatch(w.parts, keyValue)) {
          next = w.node;
          wildcardKey = w.key;
          break;
        }
      }
    }
    const matchedUsingValue = next !== undefined;
    if (next === undefined) next = node.children.get(entry.key);
    if (wildcardKey !== '' && next?.shareThreshold && next.wildcardPattern !== '') {
      shared ??= new Map();
      shared.set(i, trimPrefix(next.wildcardPattern, `${entry.key}_`));
    }
    if (valueToMetricKey === undefined && next !== undefined && (wildcardKey !== '' || next.valueToMetric)) {
      valueToMetricKey = plainMetricPrefix(root, domain, entries, i);
    }
    if (valueToMetricKey !== undefined) {
      valueToMetricKey += '.';
      if (next !== undefined) {
        let value = '';
        if (wildcardKey !== '') {
          value =
            shared?.get(i) ?? (next.valueToMetric ? entry.value : trimPrefix(wildcardKey, `${entry.key}_`));
        } else if (matchedUsingValue || next.valueToMetric) {
          value = entry.value;
        }
        valueToMetricKey += value === '' ? entry.key : `${entry.key}_${value}`;
      } else {
        valueToMetricKey += entry.key;
      }
    }
    if (next?.limit && i === entries.length - 1) {
      rule = next.limit;
      metadata = next.metadata;
    }
    if (next === undefined || next.children.size === 0) break;
    node = next;
  }
  if (!rule) return { kind: 'no_limit' };
  // A rule was found, so every entry matched a node.
  const sharedValues = shared ? entries.map((_, i) => shared.get(i) ?? '') : undefined;
  let statKey: string | undefined;
  if (rule.detailedMetric) {
    statKey = domain;
    for (let i = 0; i < entries.length; i++) {
      const e = entries[i]!;
      if (sharedValues) {
        const v = sharedValues[i] || e.value;
        statKey += v === '' ? `.${e.key}` : `.${e.key}_${v}`;
      } else {
        statKey += `.${e.key}_${e.value}`;
      }
    }
  } else if (valueToMetricKey !== undefined && valueToMetricKey !== rule.fullKey) {
    statKey = valueToMetricKey;
  }
  return { kind: 'rule', rule, statKey, sharedValues, metadata };
}
