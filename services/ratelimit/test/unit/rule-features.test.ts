import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { assembleResponse, decide } from '../../src/limiter/decide.js';
import { dynamicMetadata } from '../../src/limiter/dynamic-metadata.js';
import { type PlanContext, planRequest } from '../../src/limiter/plan.js';
import { Code, type RateLimitRequest } from '../../src/proto/messages.js';
import { matchDescriptor } from '../../src/rules/matching.js';
import { newRuleStats } from '../../src/rules/rule-stats.js';
import { StatsRegistry } from '../../src/stats/registry.js';
import { configOf, desc } from '../helpers.js';

/**
 * The newer rule features of the reference (quota_mode, value_to_metric, share_threshold,
 * metadata + RESPONSE_DYNAMIC_METADATA, wildcards inside values), each mirroring cases of the
 * reference's test/config/config_test.go and test/service/ratelimit_test.go.
 */
const fixture = (name: string) =>
  readFileSync(join(import.meta.dirname, 'fixtures', 'reference', name), 'utf8');

const registry = new StatsRegistry();
const ctx: PlanContext = {
  cacheKeyPrefix: '',
  statsFor: (key) => newRuleStats(registry, key),
  domainNotFound: () => undefined,
};

/** The stats key the reference's GetLimit gives (`rl.Stats.Key`), or undefined for no limit. */
function statKeyOf(yaml: string, entries: [string, string][], domain = 'test-domain'): string | undefined {
  const m = matchDescriptor(configOf(new StatsRegistry(), yaml), domain, desc(entries));
  return m.kind === 'rule' ? (m.statKey ?? m.rule.fullKey) : undefined;
}

function cacheKeyOf(yaml: string, entries: [string, string][], domain = 'test-domain'): string {
  const request: RateLimitRequest = { domain, descriptors: [desc(entries)], hitsAddend: 0 };
  return planRequest(configOf(new StatsRegistry(), yaml), request, 120, ctx)[0]!.cacheKey;
}

describe('wildcards inside values (TestWildcardConfig)', () => {
  const yaml = fixture('wildcard.yaml');
  it('trailing, middle and multiple *; the stats key keeps the pattern', () => {
    expect(statKeyOf(yaml, [['noVal', 'foo1']])).toBe('test-domain.noVal');
    expect(statKeyOf(yaml, [['wild', 'foo1']])).toBe('test-domain.wild_foo*');
    expect(statKeyOf(yaml, [['wild', 'foo2']])).toBe('test-domain.wild_foo*');
    expect(
      statKeyOf(yaml, [
        ['nestedWild', 'val1'],
        ['wild', 'goo2'],
      ]),
    ).toBe('test-domain.nestedWild_val1.wild_goo*');
    expect(statKeyOf(yaml, [['wild', 'bar']])).toBeUndefined();
    expect(statKeyOf(yaml, [['noWild', 'foo1']])).toBeUndefined();
    expect(statKeyOf(yaml, [['midWild', 'barab']])).toBe('test-domain.midWild_bar*b');
    expect(statKeyOf(yaml, [['midWild', 'barb']])).toBe('test-domain.midWild_bar*b');
    expect(statKeyOf(yaml, [['midWild', 'barba']])).toBeUndefined();
    expect(statKeyOf(yaml, [['multiWild', 'foo1bar2baz']])).toBe('test-domain.multiWild_foo*bar*baz');
    expect(statKeyOf(yaml, [['multiWild', 'foobarbaz']])).toBe('test-domain.multiWild_foo*bar*baz');
    expect(statKeyOf(yaml, [['multiWild', 'foobazbar']])).toBeUndefined();
  });
  it('the request key_value is matched as a whole, as the reference does', () => {
    // Config key "wild", value "foo*": the pattern is "wild_foo*", so key "wild_foo" with any value
    // matches; the reference's stats key then repeats the key (its TrimPrefix does not apply).
    expect(statKeyOf(yaml, [['wild_foo', 'x']])).toBe('test-domain.wild_foo_wild_foo*');
  });
});

describe('value_to_metric (TestValueToMetric_*)', () => {
  it('runtime values for the levels that set it', () => {
    const yaml = `domain: domain
descriptors:
  - key: route
    value_to_metric: true
    descriptors:
      - key: http_method
        value_to_metric: true
        descriptors:
          - key: subject_id
            rate_limit: { unit: minute, requests_per_unit: 60 }
`;
    expect(
      statKeyOf(
        yaml,
        [
          ['route', 'draw'],
          ['http_method', 'GET'],
          ['subject_id', '123'],
        ],
        'domain',
      ),
    ).toBe('domain.route_draw.http_method_GET.subject_id');
  });
  it('a default key level includes the value; a level without it does not; no flag is unchanged', () => {
    const yaml = `domain: d
descriptors:
  - key: k1
    value_to_metric: true
    descriptors:
      - key: k2
        rate_limit: { unit: second, requests_per_unit: 1 }
  - key: plain
    descriptors:
      - key: k2
        rate_limit: { unit: second, requests_per_unit: 1 }
`;
    expect(
      statKeyOf(
        yaml,
        [
          ['k1', 'A'],
          ['k2', 'foo'],
        ],
        'd',
      ),
    ).toBe('d.k1_A.k2');
    expect(
      statKeyOf(
        yaml,
        [
          ['plain', 'A'],
          ['k2', 'foo'],
        ],
        'd',
      ),
    ).toBe('d.plain.k2');
  });
  it('a deeper level with it keeps the exact and bare-key levels above it as they matched', () => {
    const yaml = `domain: d
descriptors:
  - key: tenant
    value: acme
    descriptors:
      - key: region
        descriptors:
          - key: user
            value_to_metric: true
            rate_limit: { unit: second, requests_per_unit: 1 }
`;
    const entries: [string, string][] = [
      ['tenant', 'acme'],
      ['region', 'eu'],
      ['user', 'bob'],
    ];
    expect(statKeyOf(yaml, entries, 'd')).toBe('d.tenant_acme.region.user_bob');
  });
  it('with a wildcard: the runtime value; detailed_metric wins over it', () => {
    const yaml = `domain: d
descriptors:
  - key: path
    value: /api/*
    value_to_metric: true
    rate_limit: { unit: second, requests_per_unit: 1 }
  - key: both
    value_to_metric: true
    detailed_metric: true
    rate_limit: { unit: second, requests_per_unit: 1 }
`;
    expect(statKeyOf(yaml, [['path', '/api/users']], 'd')).toBe('d.path_/api/users');
    expect(statKeyOf(yaml, [['both', 'x']], 'd')).toBe('d.both_x');
  });
});

describe('share_threshold (TestShareThreshold)', () => {
  const yaml = fixture('share_threshold.yaml');
  it('every matching value shares one stats key and one counter (the pattern in the cache key)', () => {
    expect(statKeyOf(yaml, [['files', 'files/a.pdf']])).toBe('test-domain.files_files/*');
    expect(statKeyOf(yaml, [['files', 'files/b.txt']])).toBe('test-domain.files_files/*');
    expect(cacheKeyOf(yaml, [['files', 'files/a.pdf']])).toBe('test-domain_files_files/*_120');
    expect(cacheKeyOf(yaml, [['files', 'files/b.txt']])).toBe('test-domain_files_files/*_120');
  });
  it('nested, the same key at two levels, and with value_to_metric (share_threshold wins)', () => {
    expect(
      statKeyOf(yaml, [
        ['nested', 'parent'],
        ['files', 'nested/x'],
      ]),
    ).toBe('test-domain.nested_parent.files_nested/*');
    expect(
      cacheKeyOf(yaml, [
        ['files', 'top/a'],
        ['files', 'nested/b'],
      ]),
    ).toBe('test-domain_files_top/*_files_nested/*_120');
    expect(
      statKeyOf(yaml, [
        ['route', 'api/v1'],
        ['method', 'GET'],
      ]),
    ).toBe('test-domain.route_api/*.method');
    expect(
      cacheKeyOf(yaml, [
        ['route', 'api/v1'],
        ['method', 'GET'],
      ]),
    ).toBe('test-domain_route_api/*_method_GET_120');
  });
  it('with detailed_metric: the pattern for the shared level, the values elsewhere', () => {
    expect(
      statKeyOf(yaml, [
        ['service', 'svc/a'],
        ['endpoint', 'e1'],
      ]),
    ).toBe('test-domain.service_svc/*.endpoint_e1');
  });
  it('an explicit value beats the wildcard and keeps its own counter', () => {
    expect(statKeyOf(yaml, [['file', 'test1']])).toBe('test-domain.file_test1');
    expect(cacheKeyOf(yaml, [['file', 'test1']])).toBe('test-domain_file_test1_120');
    expect(cacheKeyOf(yaml, [['file', 'test2']])).toBe('test-domain_file_test*_120');
  });
  it('middle and multiple wildcards', () => {
    expect(cacheKeyOf(yaml, [['midpath', '/api/users/v1']])).toBe('test-domain_midpath_/api*v1_120');
    expect(cacheKeyOf(yaml, [['multiroute', 'svc-a-ep-b-rpc']])).toBe(
      'test-domain_multiroute_svc*ep*rpc_120',
    );
    expect(statKeyOf(yaml, [['midroute', '/api/x/v2']])).toBe('test-domain.midroute_/api*v2');
  });
  it('is refused without a wildcard, with the reference message', () => {
    expect(() =>
      configOf(
        new StatsRegistry(),
        'domain: d\ndescriptors:\n  - key: k\n    value: v\n    share_threshold: true\n',
      ),
    ).toThrow(
      "config.file0.yaml: share_threshold can only be used with wildcard values (containing '*'), but found key 'k_v'",
    );
  });
});

describe('quota_mode (service: an over-limit quota descriptor blocks only when every quota descriptor is over)', () => {
  const yaml = `domain: d
descriptors:
  - key: quota
    quota_mode: true
    rate_limit: { unit: minute, requests_per_unit: 1 }
  - key: quota2
    quota_mode: true
    rate_limit: { unit: minute, requests_per_unit: 1 }
  - key: rate
    rate_limit: { unit: minute, requests_per_unit: 1 }
`;
  const config = configOf(new StatsRegistry(), yaml);
  function overall(entries: [string, string][], counts: number[], globalQuotaMode = false) {
    const request: RateLimitRequest = {
      domain: 'd',
      descriptors: entries.map((e) => desc([e])),
      hitsAddend: 0,
    };
    const plan = planRequest(config, request, 120, ctx);
    const statuses = plan.map((p, i) =>
      p.limit
        ? decide(p.limit, 1, counts[i]!, 120, { nearLimitRatio: 0.8 })
        : { code: Code.OK, limitRemaining: 0 },
    );
    const assembled = assembleResponse(plan, statuses, {
      globalShadowMode: false,
      globalQuotaMode,
      headers: undefined,
    });
    return {
      code: assembled.response.overallCode,
      statuses: assembled.response.statuses.map((s) => s.code),
      passed: assembled.passed,
    };
  }
  it('one quota descriptor over, another within: OK (the over one still says OVER_LIMIT)', () => {
    expect(
      overall(
        [
          ['quota', 'a'],
          ['quota2', 'b'],
        ],
        [2, 1],
      ),
    ).toEqual({
      code: Code.OK,
      statuses: [Code.OVER_LIMIT, Code.OK],
      passed: [1],
    });
  });
  it('every quota descriptor over: OVER_LIMIT; a rate-limit descriptor over: OVER_LIMIT whatever the quotas', () => {
    expect(
      overall(
        [
          ['quota', 'a'],
          ['quota2', 'b'],
        ],
        [2, 2],
      ).code,
    ).toBe(Code.OVER_LIMIT);
    expect(
      overall(
        [
          ['quota', 'a'],
          ['rate', 'b'],
        ],
        [1, 2],
      ).code,
    ).toBe(Code.OVER_LIMIT);
    expect(
      overall(
        [
          ['quota', 'a'],
          ['rate', 'b'],
        ],
        [2, 1],
      ).code,
    ).toBe(Code.OVER_LIMIT);
  });
  it('QUOTA_MODE makes every descriptor a quota descriptor', () => {
    expect(
      overall(
        [
          ['rate', 'a'],
          ['quota', 'b'],
        ],
        [2, 1],
        true,
      ).code,
    ).toBe(Code.OK);
    expect(
      overall(
        [
          ['rate', 'a'],
          ['quota', 'b'],
        ],
        [2, 2],
        true,
      ).code,
    ).toBe(Code.OVER_LIMIT);
  });
});

describe('metadata and RESPONSE_DYNAMIC_METADATA (TestMetadata, ratelimitToMetadata)', () => {
  const yaml = fixture('metadata.yaml');
  it('the fixture loads and a matched rule carries its metadata', () => {
    const config = configOf(new StatsRegistry(), yaml);
    const withMetadata = [...config.domains.values()].flatMap((root) =>
      [...root.children.values()].filter((n) => n.metadata !== undefined),
    );
    expect(withMetadata.length).toBeGreaterThan(0);
  });
  it('domain, descriptors, hits_addend and the merged metadata of the passed descriptors', () => {
    const config = configOf(
      new StatsRegistry(),
      `domain: d
descriptors:
  - key: a
    metadata: { team: edge, nested: { x: 1 } }
    rate_limit: { unit: minute, requests_per_unit: 5 }
  - key: b
    metadata: { team: other, nested: { z: [1, two] } }
    rate_limit: { unit: minute, requests_per_unit: 5 }
  - key: c
    metadata: { blocked: true }
    rate_limit: { unit: minute, requests_per_unit: 1 }
`,
    );
    const request: RateLimitRequest = {
      domain: 'd',
      descriptors: [
        desc([['a', '1']]),
        desc([['b', '2']], { hitsAddend: 3 }),
        desc([['c', '3']], { limit: { requestsPerUnit: 7, unit: 2 } }),
      ],
      hitsAddend: 2,
    };
    const plan = planRequest(config, request, 120, ctx);
    expect(dynamicMetadata(request, plan, [0, 1])).toEqual({
      domain: 'd',
      descriptors: [
        { entries: ['a=1'] },
        { entries: ['b=2'], hitsAddend: 3 },
        { entries: ['c=3'], limit: 'requests_per_unit:7 unit:MINUTE' },
      ],
      hitsAddend: 2,
      metadata: { team: 'edge', nested: { x: 1, z: [1, 'two'] } },
    });
  });
});
