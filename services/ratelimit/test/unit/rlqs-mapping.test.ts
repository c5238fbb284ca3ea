import { describe, expect, it } from 'vitest';
import { assignmentFor, countReport } from '../../src/rlqs/assignment.js';
import { bucketToDescriptor, matchBucket } from '../../src/rlqs/bucket-mapping.js';
import { bucketKey } from '../../src/rlqs/tracked-bucket.js';
import { StatsRegistry } from '../../src/stats/registry.js';
import { configOf } from '../helpers.js';

const registry = new StatsRegistry();
const config = configOf(
  registry,
  `
domain: d
descriptors:
  - key: env
    value: prod
    descriptors:
      - key: name
        rate_limit: { unit: minute, requests_per_unit: 600 }
  - key: name
    rate_limit: { unit: minute, requests_per_unit: 60 }
  - key: route
    value: "/api/*"
    descriptors:
      - key: method
        rate_limit: { unit: second, requests_per_unit: 5, algorithm: token_bucket, burst: 9 }
  - key: route
    rate_limit: { unit: hour, requests_per_unit: 7 }
`,
);
const root = config.domains.get('d')!;
const entries = (bucket: Record<string, string>) =>
  bucketToDescriptor(root, bucket).entries.map((e) => `${e.key}=${e.value}`);

describe('RLQS bucket id -> descriptor (the rule-tree walk)', () => {
  it('at each level the first key of the level, in file order, that the bucket holds; other pairs ignored', () => {
    expect(entries({ name: 'api', env: 'prod', pod: 'p-1' })).toEqual(['env=prod', 'name=api']);
    expect(entries({ name: 'api' })).toEqual(['name=api']);
    expect(entries({ env: 'dev', name: 'api' })).toEqual(['env=dev']);
    expect(entries({ pod: 'p-1' })).toEqual([]);
    // A wildcard value is matched as in ShouldRateLimit; the walk goes on below it.
    expect(entries({ method: 'GET', route: '/api/users' })).toEqual(['route=/api/users', 'method=GET']);
    expect(entries({ route: '/other', method: 'GET' })).toEqual(['route=/other']);
  });

  it('the descriptor is matched as a ShouldRateLimit descriptor', () => {
    const rule = (bucket: Record<string, string>) => {
      const m = matchBucket(config, 'd', bucket).match;
      return m.kind === 'rule' ? `${m.rule.fullKey} ${m.rule.requestsPerUnit}` : m.kind;
    };
    expect(rule({ name: 'api', env: 'prod' })).toBe('d.env_prod.name 600');
    expect(rule({ name: 'api' })).toBe('d.name 60');
    expect(rule({ env: 'dev', name: 'api' })).toBe('no_limit');
    expect(rule({ route: '/api/x', method: 'PUT' })).toBe('d.route_/api/*.method 5');
    expect(rule({ route: '/api/x' })).toBe('no_limit');
    expect(rule({ route: '/x' })).toBe('d.route 7');
    expect(matchBucket(config, 'other', { name: 'x' }).match.kind).toBe('domain_not_found');
  });

  it('a bucket id is one key whatever the order of its map', () => {
    expect(bucketKey('d', { a: '1', b: '2' })).toBe(bucketKey('d', { b: '2', a: '1' }));
    expect(bucketKey('d', { a: '1' })).not.toBe(bucketKey('e', { a: '1' }));
    // One pair is length-prefixed: no domain, key and value split shifts into another id.
    expect(bucketKey('d', { ab: 'c' })).not.toBe(bucketKey('d', { a: 'bc' }));
    expect(bucketKey('d1', { a: 'b' })).not.toBe(bucketKey('d', { '1a': 'b' }));
    // An id Envoy's proto does not allow has no key.
    expect(bucketKey('d', {})).toBeUndefined();
    expect(bucketKey('d', { a: '' })).toBeUndefined();
    expect(bucketKey('d', { '': 'x', b: '1' })).toBeUndefined();
  });
});

describe('RLQS assignments', () => {
  const limit = (bucket: Record<string, string>) => {
    const m = matchBucket(config, 'd', bucket).match;
    if (m.kind !== 'rule') throw new Error('no rule');
    return m.rule;
  };

  it('equal shares of floor(limit / n), at least 1 token; the window as fill interval', () => {
    const rule = limit({ name: 'x' });
    const tb = (n: number) => assignmentFor(rule, { participants: n, usage: 0 }, false).strategy;
    expect(tb(1)).toEqual({
      kind: 'token_bucket',
      maxTokens: 60,
      tokensPerFill: 60,
      fillIntervalSeconds: 60,
    });
    expect(tb(7)).toMatchObject({ maxTokens: 8, tokensPerFill: 8 });
    expect(tb(200)).toMatchObject({ maxTokens: 1, tokensPerFill: 1 });
  });

  it('the window cap: DENY_ALL once the usage reached the limit (fixed and sliding windows)', () => {
    const rule = limit({ name: 'x' });
    expect(assignmentFor(rule, { participants: 2, usage: 59 }, false).strategy.kind).toBe('token_bucket');
    expect(assignmentFor(rule, { participants: 2, usage: 60 }, false)).toEqual({
      strategy: { kind: 'deny_all' },
      shadowed: false,
      capped: true,
    });
    expect(assignmentFor(rule, { participants: 2, usage: 60 }, true)).toMatchObject({
      strategy: { kind: 'allow_all' },
      shadowed: true,
    });
  });

  it('a token-bucket rule: burst and rate split, no window cap', () => {
    const rule = limit({ route: '/api/a', method: 'GET' });
    expect(assignmentFor(rule, { participants: 2, usage: 1000 }, false).strategy).toEqual({
      kind: 'token_bucket',
      maxTokens: 4,
      tokensPerFill: 2,
      fillIntervalSeconds: 1,
    });
  });

  it('statistics from a report: allowed within, denied over, near and shadow parts of the window usage', () => {
    const r = new StatsRegistry();
    const rule = {
      ...limit({ name: 'x' }),
      stats: configOf(
        r,
        'domain: s\ndescriptors:\n  - key: k\n    rate_limit: { unit: minute, requests_per_unit: 60 }\n',
      )
        .domains.get('s')!
        .children.get('k')!.limit!.stats,
    };
    countReport(rule, 10, 2, 50, 0.8, false); // near = 48: 2 of the 10 are near
    countReport(rule, 15, 0, 65, 0.8, true); // 10 near (50..60), 5 past the limit in shadow mode
    const c = (s: string) => r.snapshot().counters.get(`ratelimit.service.rate_limit.s.k.${s}`);
    expect([c('total_hits'), c('within_limit'), c('over_limit'), c('near_limit'), c('shadow_mode')]).toEqual([
      27, 25, 2, 12, 5,
    ]);
  });
});
