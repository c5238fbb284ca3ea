import type { RequestDescriptor } from '../proto/messages.js';
import type { DescriptorNode, RateLimitConfig, RateLimitRule } from './config-tree.js';

/**
 * Finding the rule for one request descriptor (spec "Matching rules", reference "Config"): for entry i
 * try the exact `key_value` child, else the first wildcard child whose value pattern matches, else the
 * bare `key` child; the limit applies only when the node matched by the last entry holds one.
 * Pure: config tree and descriptor in, rule out.
 */
export type MatchResult =
  | { kind: 'domain_not_found' }
  | { kind: 'no_limit' }
  | { kind: 'rule'; rule: RateLimitRule; detailedStatKey: string | undefined };

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

function childFor(node: DescriptorNode, key: string, value: string): DescriptorNode | undefined {
  const exact = node.children.get(`${key}_${value}`);
  if (exact) return exact;
  for (const w of node.wildcards) {
    if (w.key === key && w.pattern.test(value)) return w.node;
  }
  return node.children.get(key);
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
  const entries = descriptor.entries;
  for (let i = 0; i < entries.length; i++) {
    const entry = entries[i]!;
    const next = childFor(node, entry.key, entry.value);
    if (!next) break;
    if (next.limit && i === entries.length - 1) rule = next.limit;
    if (next.children.size === 0) break;
    node = next;
  }
  if (!rule) return { kind: 'no_limit' };
  const detailedStatKey = rule.detailedMetric ? `${domain}.${descriptorToKey(descriptor)}` : undefined;
  return { kind: 'rule', rule, detailedStatKey };
}
