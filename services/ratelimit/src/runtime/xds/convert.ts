import type { RateLimitConfigMessage, RateLimitDescriptorMessage } from './protos.js';

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
  return out;
}

export function rateLimitConfigToYamlObject(config: RateLimitConfigMessage): YamlConfig {
  const out: YamlConfig = { domain: config.domain };
  if (config.descriptors.length > 0) out.descriptors = config.descriptors.map(descriptor);
  return out;
}
