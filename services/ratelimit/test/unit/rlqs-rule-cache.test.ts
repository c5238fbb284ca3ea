import { describe, expect, it } from 'vitest';
import { RuleCache } from '../../src/rlqs/rule-cache.js';
import { rematch, type TrackedBucket } from '../../src/rlqs/tracked-bucket.js';
import { StatsRegistry } from '../../src/stats/registry.js';
import { configOf } from '../helpers.js';

const registry = new StatsRegistry();
const rules = (limit: number) =>
  configOf(
    registry,
    `domain: d\ndescriptors:\n  - key: name\n    rate_limit: { unit: minute, requests_per_unit: ${limit} }\n`,
  );

function bucket(id: string, name: string, domain = 'd'): TrackedBucket {
  return {
    domain,
    bucketId: { name },
    id,
    idBytes: '',
    wireIds: [],
    member: 'm',
    config: undefined,
    limit: undefined,
    counterKey: undefined,
    shadow: false,
    lastReportMs: 0,
    lastUsageMs: 0,
    state: { participants: 0, usage: 0 },
    stateAt: 0,
    sent: undefined,
    cappedUntilMs: 0,
  };
}

describe('RLQS rule matches shared across streams (RuleCache)', () => {
  it('matches a bucket id once per config; a new config (a reload) matches it again', () => {
    const cache = new RuleCache();
    let matched = 0;
    const v1 = rules(60);
    const match = () => {
      matched++;
      return { limit: undefined, counterKey: 'k', shadow: false, domainNotFound: false };
    };
    expect(cache.ruleOf(v1, 'a', match)).toBe(cache.ruleOf(v1, 'a', match));
    expect(matched).toBe(1);
    cache.ruleOf(v1, 'b', match);
    expect(matched).toBe(2);
    cache.ruleOf(rules(60), 'a', match);
    expect(matched).toBe(3);
  });

  it('is emptied when full', () => {
    const cache = new RuleCache(2);
    const config = rules(60);
    let matched = 0;
    const match = () => {
      matched++;
      return { limit: undefined, counterKey: undefined, shadow: false, domainNotFound: false };
    };
    for (const id of ['a', 'b', 'c', 'a']) cache.ruleOf(config, id, match);
    expect(matched).toBe(4);
  });

  it('two streams of one bucket share its match; after a reload both get the new rule', () => {
    const ctx = {
      cacheKeyPrefix: 'p:',
      globalShadowMode: false,
      rules: new RuleCache(),
      statsFor: () => {
        throw new Error('no stats key here');
      },
      domainNotFound: () => {
        notFound++;
      },
    };
    let notFound = 0;
    const v1 = rules(60);
    const a = bucket('x', 'api');
    const b = bucket('x', 'api');
    rematch(a, v1, ctx);
    rematch(b, v1, ctx);
    expect(a.counterKey).toBe('p:{rlqs_d_name_api_}');
    expect(b.limit).toBe(a.limit);
    expect(a.limit?.requestsPerUnit).toBe(60);
    const v2 = rules(600);
    expect(rematch(a, v2, ctx)).toBe('p:{rlqs_d_name_api_}');
    expect(a.limit?.requestsPerUnit).toBe(600);
    // An unknown domain is counted at every match, cached or not.
    rematch(bucket('y', 'api', 'other'), v2, ctx);
    rematch(bucket('y', 'api', 'other'), v2, ctx);
    expect(notFound).toBe(2);
  });
});
