import { type RateLimitRequest, UNIT_NAMES } from '../proto/messages.js';
import type { MetadataValue } from '../rules/yaml-file.js';
import type { PlannedDescriptor } from './plan.js';

/**
 * The response's `dynamic_metadata` under RESPONSE_DYNAMIC_METADATA, as the reference's
 * `ratelimitToMetadata`: the domain, each descriptor (`entries` as `key=value`, its limit override
 * and hits_addend), the request's hits_addend when not 0, and the `metadata` of the rules of the
 * descriptors that passed, merged (nested maps merged; the first value of a key wins).
 */
export type MetadataObject = { [key: string]: MetadataValue };

function isObject(v: MetadataValue | undefined): v is MetadataObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function merge(dest: MetadataObject, src: { readonly [key: string]: MetadataValue }): void {
  for (const [k, v] of Object.entries(src)) {
    const existing = dest[k];
    if (existing === undefined) {
      dest[k] = isObject(v) ? structuredClone(v) : v;
    } else if (isObject(existing) && isObject(v)) {
      merge(existing, v);
    }
  }
}

export function dynamicMetadata(
  request: RateLimitRequest,
  plan: readonly PlannedDescriptor[],
  passed: readonly number[],
): MetadataObject {
  const out: MetadataObject = {
    domain: request.domain,
    descriptors: request.descriptors.map((d) => {
      const fields: MetadataObject = { entries: d.entries.map((e) => `${e.key}=${e.value}`) };
      // Go's text form of the RateLimitOverride message.
      if (d.limit)
        fields.limit = `requests_per_unit:${d.limit.requestsPerUnit} unit:${UNIT_NAMES[d.limit.unit]}`;
      if (d.hitsAddend !== undefined) fields.hitsAddend = d.hitsAddend;
      return fields;
    }),
  };
  if (request.hitsAddend !== 0) out.hitsAddend = request.hitsAddend;
  const merged: MetadataObject = {};
  for (const i of passed) {
    const m = plan[i]?.limit ? plan[i]!.metadata : undefined;
    if (m) merge(merged, m);
  }
  if (Object.keys(merged).length > 0) out.metadata = merged;
  return out;
}
