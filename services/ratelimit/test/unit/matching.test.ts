import { describe, expect, it } from 'vitest';
import { descriptorToKey, matchDescriptor } from '../../src/rules/matching.js';
import { StatsRegistry } from '../../src/stats/registry.js';
import { configOf, desc } from '../helpers.js';

const YAML = `
domain: d
descriptors:
  - key: k1
    value: v1
    rate_limit: { unit: second, requests_per_unit: 1 }
  - key: k1
    rate_limit: { unit: minute, requests_per_unit: 2 }
  - key: path
    value: /api/*
    rate_limit: { unit: hour, requests_per_unit: 3 }
  - key: path
    value: "*/admin/*/edit"
    rate_limit: { unit: day, requests_per_unit: 4 }
  - key: path
    value: /api/special
    rate_limit: { unit: second, requests_per_unit: 5 }
  - key: open
  - key: parent
    value: p
    descriptors:
      - key: child
        rate_limit: { unit: second, requests_per_unit: 6 }
        descriptors:
          - key: grandchild
            value: g
            rate_limit: { unit: second, requests_per_unit: 7 }
  - key: detailed
    detailed_metric: true
    rate_limit: { unit: second, requests_per_unit: 8 }
`;

const config = configOf(new StatsRegistry(), YAML);
const limitOf = (pairs: [string, string][], domain = 'd') => {
  const m = matchDescriptor(config, domain, desc(pairs));
  return m.kind === 'rule' ? m.rule.requestsPerUnit : m.kind;
};

describe('matching (spec "Matching rules")', () => {
  it('rule 2: key+value beats key only; rule 3: key only matches any value', () => {
    expect(limitOf([['k1', 'v1']])).toBe(1);
    expect(limitOf([['k1', 'other']])).toBe(2);
    expect(limitOf([['k1', '']])).toBe(2);
  });
  it('wildcard values: trailing * is a prefix match, * anywhere matches any run; exact beats wildcard', () => {
    expect(limitOf([['path', '/api/users']])).toBe(3);
    expect(limitOf([['path', '/api/']])).toBe(3);
    expect(limitOf([['path', '/v2/admin/42/edit']])).toBe(4);
    expect(limitOf([['path', '/v2/admin/42/view']])).toBe('no_limit');
    expect(limitOf([['path', '/api/special']])).toBe(5);
    expect(limitOf([['path', '/other']])).toBe('no_limit');
  });
  it('rule 4: an entry without rate_limit and without children is whitelisted', () => {
    expect(limitOf([['open', 'x']])).toBe('no_limit');
  });
  it('rule 4: an entry with children and no rate_limit is only a placeholder', () => {
    expect(limitOf([['parent', 'p']])).toBe('no_limit');
    expect(
      limitOf([
        ['parent', 'p'],
        ['child', 'c'],
      ]),
    ).toBe(6);
  });
  it('rule 1: request depth must equal the depth of the entry holding the limit', () => {
    expect(
      limitOf([
        ['k1', 'v1'],
        ['extra', 'x'],
      ]),
    ).toBe('no_limit');
    expect(
      limitOf([
        ['parent', 'p'],
        ['child', 'c'],
        ['grandchild', 'g'],
      ]),
    ).toBe(7);
    expect(
      limitOf([
        ['parent', 'p'],
        ['child', 'c'],
        ['grandchild', 'other'],
      ]),
    ).toBe('no_limit');
    expect(
      limitOf([
        ['parent', 'other'],
        ['child', 'c'],
      ]),
    ).toBe('no_limit');
  });
  it('descriptors are case-sensitive', () => {
    expect(limitOf([['K1', 'v1']])).toBe('no_limit');
    expect(limitOf([['k1', 'V1']])).toBe(2);
  });
  it('unknown domain is reported as such', () => {
    expect(limitOf([['k1', 'v1']], 'nope')).toBe('domain_not_found');
  });
  it('rule 9: detailed_metric keys stats by the request values', () => {
    const m = matchDescriptor(config, 'd', desc([['detailed', 'abc']]));
    expect(m).toMatchObject({ kind: 'rule', statKey: 'd.detailed_abc' });
    const plain = matchDescriptor(config, 'd', desc([['k1', 'zzz']]));
    expect(plain).toMatchObject({ kind: 'rule', statKey: undefined });
    if (plain.kind === 'rule') expect(plain.rule.fullKey).toBe('d.k1');
  });
  it('descriptorToKey omits empty values', () => {
    expect(
      descriptorToKey(
        desc([
          ['a', '1'],
          ['b', ''],
        ]),
      ),
    ).toBe('a_1.b');
  });
});
