import { stringify } from 'yaml';
import type { LimitsConfig } from './rules.js';

/**
 * The services/ratelimit config file for a limits file: one descriptor tree per rule,
 * `rule=<name>` then `address` or `key` without a value, so the service keeps one counter per
 * distinct address or key (design/ratelimit-reference.md, "the request's values are used").
 * Pure; `limits-ratelimit-config.ts` writes it.
 */
export function ratelimitConfigYaml(config: LimitsConfig, source: string): string {
  const document = {
    domain: config.domain,
    descriptors: config.rules.map((rule) => ({
      key: 'rule',
      value: rule.name,
      descriptors: [
        {
          key: rule.per,
          rate_limit: { unit: rule.unit, requests_per_unit: rule.requestsPerUnit },
        },
      ],
    })),
  };
  return (
    `# services/ratelimit rules of the exchange's request limits, generated from ${source}\n` +
    '# by `npm run limits:ratelimit-config -w services/exchange`: edit that file, not this one.\n' +
    stringify(document)
  );
}
