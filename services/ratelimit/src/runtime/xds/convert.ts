import type { MetadataValue } from '../../rules/yaml-file.js';
import type { RateLimitConfigMessage, RateLimitDescriptorMessage, WireStruct, WireValue } from './protos.js';

/**
 * Turns a `RateLimitConfig` resource from the configuration server into the object a YAML config
 * file would parse to (`domain`, `descriptors`, `rate_limit` ...), so one validator and one set of
 * error messages serve files and the management server alike. Proto3 defaults (empty value,
 * false flags, empty lists) are left out, as a file author would; a unit is emitted unless the
 * rule is unlimited without one, so `UNKNOWN` on a limited rule reaches the validator's
 * "invalid rate limit unit" error.
 */
export interface YamlDescriptor {
  key: string;
  value?: string;
  rate_limit?: {
    unit?: string;
    requests_per_unit?: number;
    unlimited?: boolean;
    name?: string;
    replaces?: { name: string }[];
  };
  descriptors?: YamlDescriptor[];
  shadow_mode?: boolean;
  detailed_metric?: boolean;
  quota_mode?: boolean;
  metadata?: { [key: string]: MetadataValue };
}

export interface YamlConfig {
  domain: string;
  descriptors?: YamlDescriptor[];
}

function descriptor(d: RateLimitDescriptorMessage): YamlDescriptor {
  const out: YamlDescriptor = { key: d.key };
  if (d.value) out.value = d.value;
  const policy = d.rate_limit;
  if (policy) {
    const rl: NonNullable<YamlDescriptor['rate_limit']> = {};
    if (!(policy.unlimited && policy.unit === 'UNKNOWN')) rl.unit = policy.unit;
    if (!policy.unlimited || policy.requests_per_unit !== 0) rl.requests_per_unit = policy.requests_per_unit;
    if (policy.unlimited) rl.unlimited = true;
    if (policy.name) rl.name = policy.name;
    if (policy.replaces.length > 0) rl.replaces = policy.replaces.map((r) => ({ name: r.name }));
    out.rate_limit = rl;
  }
  if (d.descriptors.length > 0) out.descriptors = d.descriptors.map(descriptor);
  if (d.shadow_mode) out.shadow_mode = true;
  if (d.detailed_metric) out.detailed_metric = true;
  if (d.quota_mode) out.quota_mode = true;
  // As the reference's structpbToMap; an empty Struct is no metadata.
  const metadata = d.metadata ? structToObject(d.metadata) : undefined;
  if (metadata && Object.keys(metadata).length > 0) out.metadata = metadata;
  return out;
}

function wireToValue(v: WireValue): MetadataValue {
  if (v.numberValue !== undefined && v.numberValue !== null) return v.numberValue;
  if (v.stringValue !== undefined && v.stringValue !== null) return v.stringValue;
  if (v.boolValue !== undefined && v.boolValue !== null) return v.boolValue;
  if (v.listValue) return (v.listValue.values ?? []).map(wireToValue);
  if (v.structValue) return structToObject(v.structValue);
  return null;
}

function structToObject(s: WireStruct): { [key: string]: MetadataValue } {
  return Object.fromEntries(Object.entries(s.fields ?? {}).map(([k, v]) => [k, wireToValue(v)]));
}

export function rateLimitConfigToYamlObject(config: RateLimitConfigMessage): YamlConfig {
  const out: YamlConfig = { domain: config.domain };
  if (config.descriptors.length > 0) out.descriptors = config.descriptors.map(descriptor);
  return out;
}
