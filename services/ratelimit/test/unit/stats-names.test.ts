import { describe, expect, it } from 'vitest';
import { newRuleStats } from '../../src/rules/rule-stats.js';
import { StatsRegistry } from '../../src/stats/registry.js';
import { sanitizeStatName } from '../../src/stats/sanitize.js';

/** The reference's SanitizeStatName (src/utils/utilities_test.go cases). */
describe('stat names sanitised as the reference does', () => {
  it.each([
    ['domain.key_value', 'domain.key_value'],
    ['domain.remote_address_10.0.0.1', 'domain.remote_address_10_0_0_1'],
    ['d.path_/a:b|c', 'd.path_/a_b_c'],
    ['d.ip_192.168.1.1:8080', 'd.ip_192_168_1_1_8080'],
    ['d.version_1.2.3', 'd.version_1.2.3'],
    ['d.x_1234.1.1.1', 'd.x_1234_1_1_1'],
  ])('%s -> %s', (input, output) => {
    expect(sanitizeStatName(input)).toBe(output);
  });

  it('rule counters use the sanitised key', () => {
    const registry = new StatsRegistry();
    newRuleStats(registry, 'd.remote_address_10.0.0.1').totalHits.inc();
    expect([...registry.snapshot().counters.keys()]).toContain(
      'ratelimit.service.rate_limit.d.remote_address_10_0_0_1.total_hits',
    );
  });
});
