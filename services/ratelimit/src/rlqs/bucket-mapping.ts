import type { RequestDescriptor, RequestEntry } from '../proto/messages.js';
import { type DescriptorNode, type RateLimitConfig, wildcardMatch } from '../rules/config-tree.js';
import { type MatchResult, matchDescriptor } from '../rules/matching.js';
import type { BucketId } from './protos.js';

/**
 * From an RLQS bucket id (an unordered `map<string, string>`) to the rate-limit descriptor the
 * rules match: walk the domain's rule tree from the top; at each level take the first key of that
 * level (in file order) that the bucket holds, with its value; descend into the node that entry
 * matches (exact value, else wildcard, else the bare key) and go on until the bucket holds no key
 * of the level or the node has no children. Pairs the tree never reaches are ignored. The
 * descriptor is then matched as a ShouldRateLimit descriptor is. Pure.
 *
 * Example (README, "RLQS"): with
 *
 *     - key: env
 *       value: prod
 *       descriptors:
 *         - key: name
 *           rate_limit: { unit: minute, requests_per_unit: 600 }
 *     - key: name
 *       rate_limit: { unit: minute, requests_per_unit: 60 }
 *
 * the bucket `{name: api, env: prod, pod: p-1}` becomes `[env=prod, name=api]` (600 per minute:
 * `env` comes first at the top level), `{name: api}` becomes `[name=api]` (60 per minute), and
 * `{env: dev, name: api}` becomes `[env=dev]`, which no rule holds: ALLOW_ALL.
 */
function childFor(node: DescriptorNode, entry: RequestEntry): DescriptorNode | undefined {
  const keyValue = `${entry.key}_${entry.value}`;
  return (
    node.children.get(keyValue) ??
    node.wildcards.find((w) => wildcardMatch(w.parts, keyValue))?.node ??
    node.children.get(entry.key)
  );
}

export function bucketToDescriptor(root: DescriptorNode, bucket: BucketId): RequestDescriptor {
  const entries: RequestEntry[] = [];
  let node: DescriptorNode | undefined = root;
  while (node && node.childKeys.length > 0) {
    const key: string | undefined = node.childKeys.find((k) => Object.hasOwn(bucket, k));
    if (key === undefined) break;
    const entry = { key, value: bucket[key]! };
    entries.push(entry);
    node = childFor(node, entry);
  }
  return { entries };
}

export type BucketMatch = { descriptor: RequestDescriptor; match: MatchResult };

/** The bucket's descriptor and its rule in `domain` (`domain_not_found` when no file has it). */
export function matchBucket(config: RateLimitConfig, domain: string, bucket: BucketId): BucketMatch {
  const root = config.domains.get(domain);
  if (!root) return { descriptor: { entries: [] }, match: { kind: 'domain_not_found' } };
  const descriptor = bucketToDescriptor(root, bucket);
  if (descriptor.entries.length === 0) return { descriptor, match: { kind: 'no_limit' } };
  return { descriptor, match: matchDescriptor(config, domain, descriptor) };
}
