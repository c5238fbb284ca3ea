import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildConfig, type ConfigFile } from '../../src/rules/config-tree.js';
import { parseConfigFile } from '../../src/rules/yaml-file.js';
import { StatsRegistry } from '../../src/stats/registry.js';

/**
 * The reference's own config fixtures (envoyproxy/ratelimit test/config/*.yaml, copied into
 * fixtures/reference) give the reference's exact messages (test/config/config_test.go), and YAML is
 * read as its parser, gopkg.in/yaml.v2, reads it.
 */
const FIXTURES = join(import.meta.dirname, 'fixtures', 'reference');
const file = (name: string): ConfigFile => ({ name, text: readFileSync(join(FIXTURES, name), 'utf8') });

function load(files: ConfigFile[], merge = false) {
  return buildConfig(files, new StatsRegistry(), { mergeDomainConfig: merge });
}
function errorOf(files: ConfigFile[], merge = false): string {
  const built = load(files, merge);
  if (built.ok) throw new Error('expected an error');
  return built.error;
}
const text = (t: string): ConfigFile => ({ name: 'f.yaml', text: t });

describe('the reference fixtures give the reference messages (config_test.go)', () => {
  it.each([
    ['empty_domain.yaml', 'empty_domain.yaml: config file cannot have empty domain'],
    ['empty_key.yaml', 'empty_key.yaml: descriptor has empty key'],
    [
      'duplicate_key.yaml',
      "duplicate_key.yaml: duplicate descriptor composite key 'test-domain.key1_value1'",
    ],
    ['bad_limit_unit.yaml', "bad_limit_unit.yaml: invalid rate limit unit 'foo'"],
    ['replaces_self.yaml', 'replaces_self.yaml: replaces should not contain name of same descriptor'],
    ['replaces_empty.yaml', 'replaces_empty.yaml: should not have an empty replaces entry'],
    [
      'bad_yaml.yaml',
      'bad_yaml.yaml: error loading config file: yaml: line 2: found unexpected end of stream',
    ],
    ['misspelled_key.yaml', "misspelled_key.yaml: config error, unknown key 'ratelimit'"],
    ['misspelled_key2.yaml', "misspelled_key2.yaml: config error, unknown key 'requestsperunit'"],
    ['non_string_key.yaml', 'non_string_key.yaml: config error, key is not of type string: 0.25'],
    [
      'non_map_list.yaml',
      'non_map_list.yaml: config error, yaml file contains list of type other than map: a',
    ],
    [
      'unlimited_with_unit.yaml',
      'unlimited_with_unit.yaml: should not specify rate limit unit when unlimited',
    ],
  ])('%s', (name, message) => {
    expect(errorOf([file(name)])).toBe(message);
  });

  it('TestDuplicateDomain and TestDuplicateKeyDomainMerge', () => {
    expect(errorOf([file('basic_config.yaml'), file('duplicate_domain.yaml')])).toBe(
      "duplicate_domain.yaml: duplicate domain 'test-domain' in config file",
    );
    expect(errorOf([file('merge_domain_key1.yaml'), file('merge_domain_key1.yaml')], true)).toBe(
      "merge_domain_key1.yaml: duplicate descriptor composite key 'test-domain.key1_value1'",
    );
  });

  it('TestDomainMerge and the good fixtures load', () => {
    expect(load([file('merge_domain_key1.yaml'), file('merge_domain_key2.yaml')], true).ok).toBe(true);
    for (const name of [
      'basic_config.yaml',
      'shadowmode_config.yaml',
      'wildcard.yaml',
      'share_threshold.yaml',
      'metadata.yaml',
    ]) {
      const built = load([file(name)]);
      expect(built.ok ? 'ok' : built.error).toBe('ok');
    }
  });
});

describe('YAML as yaml.v2 reads it', () => {
  const rule = (extra = '') => `    rate_limit:\n      unit: minute\n      requests_per_unit: 5\n${extra}`;

  it('anchors and aliases: an alias is the anchored node', () => {
    const built = load([
      text(
        `domain: d\ndescriptors:\n  - key: a\n    rate_limit: &five\n      unit: minute\n      requests_per_unit: 5\n  - key: b\n    rate_limit: *five\n`,
      ),
    ]);
    expect(built.ok).toBe(true);
    if (built.ok)
      expect(built.config.domains.get('d')!.children.get('b')!.limit).toMatchObject({
        requestsPerUnit: 5,
        unit: 2,
      });
  });

  it('<< merge keys: merged fields, own fields win when written after the merge; sequences of maps, earlier ones winning', () => {
    const built = load([
      text(
        [
          'domain: d',
          'descriptors:',
          '  - key: a',
          '    rate_limit: &base {unit: minute, requests_per_unit: 5}',
          '  - key: b',
          '    rate_limit:',
          '      <<: *base',
          '      requests_per_unit: 9',
          '  - key: c',
          '    rate_limit:',
          '      <<: [{unit: hour}, {unit: day, requests_per_unit: 2}]',
          '',
        ].join('\n'),
      ),
    ]);
    expect(built.ok ? 'ok' : built.error).toBe('ok');
    if (built.ok) {
      const d = built.config.domains.get('d')!;
      expect(d.children.get('b')!.limit).toMatchObject({ requestsPerUnit: 9, unit: 2 });
      expect(d.children.get('c')!.limit).toMatchObject({ requestsPerUnit: 2, unit: 3 });
    }
  });

  it('merged keys are validated like written ones; a merge of a scalar is the yaml.v2 error', () => {
    expect(errorOf([text('domain: d\ndescriptors:\n  - key: a\n    <<: {bogus: 1}\n')])).toBe(
      "f.yaml: config error, unknown key 'bogus'",
    );
    expect(errorOf([text('domain: d\n<<: 5\n')])).toBe(
      'f.yaml: error loading config file: yaml: map merge requires map or sequence of maps as the value',
    );
  });

  it('a repeated key keeps its last value', () => {
    const built = load([
      text(`domain: x\ndomain: d\ndescriptors:\n  - key: a\n${rule()}      requests_per_unit: 7\n`),
    ]);
    expect(built.ok ? 'ok' : built.error).toBe('ok');
    if (built.ok) expect(built.config.domains.get('d')!.children.get('a')!.limit!.requestsPerUnit).toBe(7);
  });

  it('multi-document files: only the first document counts (later ones are not even parsed)', () => {
    const built = load([
      text(`domain: d\ndescriptors:\n  - key: a\n${rule()}---\ndomain: other\n---\n: [broken\n`),
    ]);
    expect(built.ok ? 'ok' : built.error).toBe('ok');
    if (built.ok) expect([...built.config.domains.keys()]).toEqual(['d']);
    expect(errorOf([text('---\n---\ndomain: d\n')])).toBe('f.yaml: config file cannot have empty domain');
  });

  it('a nesting too deep for any parser is an error, not a crash', () => {
    const deep = `domain: ${'['.repeat(20_000)}${']'.repeat(20_000)}\n`;
    expect(errorOf([text(deep)])).toBe(
      'f.yaml: error loading config file: yaml: exceeded max depth of 10000',
    );
  });

  it('undefined and self-containing anchors', () => {
    expect(errorOf([text('domain: *nope\n')])).toBe(
      "f.yaml: error loading config file: yaml: unknown anchor 'nope' referenced",
    );
    expect(errorOf([text('domain: d\ndescriptors: &a\n  - key: k\n    descriptors: *a\n')])).toBe(
      "f.yaml: error loading config file: yaml: anchor 'a' value contains itself",
    );
  });

  it('leaves other than string, int, bool and null fail the key check', () => {
    expect(
      errorOf([
        text(
          `domain: d\ndescriptors:\n  - key: a\n    rate_limit:\n      unit: minute\n      requests_per_unit: 5.5\n`,
        ),
      ]),
    ).toBe('f.yaml: error checking config');
  });

  it('type errors are all collected, with lines and values truncated as yaml.v2 does', () => {
    expect(
      errorOf([
        text(
          'domain: d\ndescriptors:\n  - key: a\n    shadow_mode: absolutely-not\n    rate_limit:\n      unit: minute\n      requests_per_unit: -1\n  - key: b\n    rate_limit: 5\n',
        ),
      ]),
    ).toBe(
      [
        'f.yaml: error loading config file: yaml: unmarshal errors:',
        '  line 4: cannot unmarshal !!str `absolut...` into bool',
        '  line 7: cannot unmarshal !!int `-1` into uint32',
        '  line 9: cannot unmarshal !!int `5` into config.YamlRateLimit',
      ].join('\n'),
    );
    expect(errorOf([text('- a\n')])).toBe(
      'f.yaml: error loading config file: yaml: unmarshal errors:\n  line 1: cannot unmarshal !!seq into map[interface {}]interface {}',
    );
  });

  it('non-string keys and list elements are printed as Go prints them', () => {
    expect(errorOf([text('domain: d\ntrue: 1\n')])).toBe(
      'f.yaml: config error, key is not of type string: true',
    );
    expect(errorOf([text('domain: d\ndescriptors:\n  - [a, 1]\n')])).toBe(
      'f.yaml: config error, yaml file contains list of type other than map: [a 1]',
    );
    expect(errorOf([text('domain: d\ndescriptors:\n  -\n')])).toBe(
      'f.yaml: config error, yaml file contains list of type other than map: <nil>',
    );
  });
});

/** Each expectation is what libyaml (the C library yaml.v2 is a port of) reports, with yaml.v2's line rule. */
describe('syntax errors in libyaml words', () => {
  it.each([
    ["'''\n", 'yaml: line 2: found unexpected end of stream'],
    ['domain: [a\n', "yaml: line 1: did not find expected ',' or ']'"],
    ['{a: 1\n', "yaml: line 1: did not find expected ',' or '}'"],
    ['a: b: c\n', 'yaml: mapping values are not allowed in this context'],
    ['domain: d\n  foo: bar\n', 'yaml: line 2: mapping values are not allowed in this context'],
    [
      'domain: d\ndescriptors:\n  - key: a\n   value: b\n',
      "yaml: line 3: did not find expected '-' indicator",
    ],
    ['a:\n  - b\n  c: d\n', "yaml: line 2: did not find expected '-' indicator"],
    ['domain: "abc\n', 'yaml: line 2: found unexpected end of stream'],
    ['domain: d\ndescriptors:\n- key: a\n  bad\n', "yaml: line 5: could not find expected ':'"],
    ['domain: d\n- a\n', 'yaml: line 1: did not find expected key'],
    ['domain: "\\q"\n', 'yaml: found unknown escape character'],
    [
      'domain: d\ndescriptors:\n  - key: a\n    rate_limit: {unit: second, requests_per_unit: 1\n',
      "yaml: line 4: did not find expected ',' or '}'",
    ],
  ])('%j', (source, message) => {
    const parsed = parseConfigFile(source);
    expect(parsed.ok ? 'ok' : parsed.error).toBe(`error loading config file: ${message}`);
  });
});
