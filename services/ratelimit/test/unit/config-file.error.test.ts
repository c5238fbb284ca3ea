import { describe, expect, it } from 'vitest';
import { buildConfig } from '../../src/rules/config-tree.js';
import { StatsRegistry } from '../../src/stats/registry.js';

function errorOf(texts: string[], merge = false): string {
  const built = buildConfig(
    texts.map((text, i) => ({ name: `config.f${i}.yaml`, text })),
    new StatsRegistry(),
    { mergeDomainConfig: merge },
  );
  if (built.ok) throw new Error('expected an error');
  return built.error;
}

const rl = (unit: string, n = 1) => `    rate_limit:\n      unit: ${unit}\n      requests_per_unit: ${n}\n`;

describe('config validation errors (reference messages, prefixed with the config name)', () => {
  it('YAML syntax error', () => {
    expect(errorOf(['domain: [a\n'])).toMatch(/^config\.f0\.yaml: error loading config file: yaml: /);
  });
  it('a file that is not a map', () => {
    expect(errorOf(['- a\n- b\n'])).toMatch(
      /^config\.f0\.yaml: error loading config file: .*cannot unmarshal !!seq/s,
    );
  });
  it('unknown key, at any depth', () => {
    expect(errorOf(['domain: d\nfoo: 1\n'])).toBe("config.f0.yaml: config error, unknown key 'foo'");
    expect(
      errorOf(['domain: d\ndescriptors:\n  - key: a\n    rate_limit:\n      unit: second\n      bogus: 2\n']),
    ).toBe("config.f0.yaml: config error, unknown key 'bogus'");
  });
  it('non-string key', () => {
    expect(errorOf(['domain: d\n1: x\n'])).toBe('config.f0.yaml: config error, key is not of type string: 1');
  });
  it('list element that is not a map', () => {
    expect(errorOf(['domain: d\ndescriptors:\n  - plain\n'])).toBe(
      'config.f0.yaml: config error, yaml file contains list of type other than map: plain',
    );
  });
  it('empty domain', () => {
    expect(errorOf(['descriptors: []\n'])).toBe('config.f0.yaml: config file cannot have empty domain');
    expect(errorOf([''])).toBe('config.f0.yaml: config file cannot have empty domain');
  });
  it('duplicate domain without merge, allowed with merge', () => {
    expect(errorOf(['domain: d\n', 'domain: d\n'])).toBe(
      "config.f1.yaml: duplicate domain 'd' in config file",
    );
    const merged = buildConfig(
      [
        { name: 'a', text: `domain: d\ndescriptors:\n  - key: a\n${rl('second')}` },
        { name: 'b', text: `domain: d\ndescriptors:\n  - key: b\n${rl('second')}` },
      ],
      new StatsRegistry(),
      { mergeDomainConfig: true },
    );
    expect(merged.ok).toBe(true);
    if (merged.ok) expect([...merged.config.domains.get('d')!.children.keys()]).toEqual(['a', 'b']);
  });
  it('duplicate key across merged files', () => {
    const text = `domain: d\ndescriptors:\n  - key: a\n${rl('second')}`;
    expect(errorOf([text, text], true)).toBe("config.f1.yaml: duplicate descriptor composite key 'd.a'");
  });
  it('empty key', () => {
    expect(errorOf([`domain: d\ndescriptors:\n  - value: v\n${rl('second')}`])).toBe(
      'config.f0.yaml: descriptor has empty key',
    );
  });
  it('duplicate key/value at one level, nested composite key in the message', () => {
    const nested = `domain: d\ndescriptors:\n  - key: k\n    value: v\n    descriptors:\n      - key: s\n        value: x\n      - key: s\n        value: x\n`;
    expect(errorOf([nested])).toBe("config.f0.yaml: duplicate descriptor composite key 'd.k_v.s_x'");
  });
  it('bad or missing unit', () => {
    expect(errorOf([`domain: d\ndescriptors:\n  - key: a\n${rl('fortnight')}`])).toBe(
      "config.f0.yaml: invalid rate limit unit 'fortnight'",
    );
    expect(
      errorOf(['domain: d\ndescriptors:\n  - key: a\n    rate_limit:\n      requests_per_unit: 3\n']),
    ).toBe("config.f0.yaml: invalid rate limit unit ''");
  });
  it('unlimited with a unit', () => {
    expect(
      errorOf([
        'domain: d\ndescriptors:\n  - key: a\n    rate_limit:\n      unlimited: true\n      unit: second\n',
      ]),
    ).toBe('config.f0.yaml: should not specify rate limit unit when unlimited');
  });
  it('replaces: empty name, and naming itself', () => {
    const base =
      'domain: d\ndescriptors:\n  - key: a\n    rate_limit:\n      unit: second\n      requests_per_unit: 1\n      name: n\n';
    expect(errorOf([`${base}      replaces:\n        - name: ""\n`])).toBe(
      'config.f0.yaml: should not have an empty replaces entry',
    );
    expect(errorOf([`${base}      replaces:\n        - name: n\n`])).toBe(
      'config.f0.yaml: replaces should not contain name of same descriptor',
    );
  });
  it('requests_per_unit that is not an unsigned 32-bit integer', () => {
    expect(errorOf([`domain: d\ndescriptors:\n  - key: a\n${rl('second', -1)}`])).toMatch(
      /cannot unmarshal !!int `-1` into uint32/,
    );
    expect(errorOf([`domain: d\ndescriptors:\n  - key: a\n${rl('second', 4294967296)}`])).toMatch(
      /into uint32/,
    );
  });
  it('accepts units case-insensitively, numeric values as strings, quota_mode, YAML 1.1 booleans', () => {
    const built = buildConfig(
      [
        {
          name: 'x',
          text: 'domain: d\ndescriptors:\n  - key: code\n    value: 200\n    shadow_mode: yes\n    quota_mode: true\n    rate_limit:\n      unit: MiNuTe\n      requests_per_unit: 5\n',
        },
      ],
      new StatsRegistry(),
      { mergeDomainConfig: false },
    );
    expect(built.ok).toBe(true);
    if (built.ok) {
      const rule = built.config.domains.get('d')!.children.get('code_200')!.limit!;
      expect(rule).toMatchObject({ unit: 2, requestsPerUnit: 5, shadowMode: true, fullKey: 'd.code_200' });
    }
  });
});
