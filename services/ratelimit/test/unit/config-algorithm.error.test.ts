import { describe, expect, it } from 'vitest';
import { type BuildOptions, buildConfig, dumpConfig } from '../../src/rules/config-tree.js';
import { StatsRegistry } from '../../src/stats/registry.js';

function build(rateLimit: string, options: Partial<BuildOptions> = {}) {
  const text = `domain: d\ndescriptors:\n  - key: k\n    value: v\n    rate_limit: ${rateLimit}\n`;
  return buildConfig([{ name: 'config.f.yaml', text }], new StatsRegistry(), {
    mergeDomainConfig: false,
    ...options,
  });
}

function errorOf(rateLimit: string, options: Partial<BuildOptions> = {}): string {
  const built = build(rateLimit, options);
  if (built.ok) throw new Error('expected an error');
  return built.error;
}

describe('algorithm keys under rate_limit: refused at load naming the rule and the value', () => {
  it('an unknown algorithm', () => {
    expect(errorOf('{ unit: minute, requests_per_unit: 1, algorithm: leaky_bucket }')).toBe(
      "config.f.yaml: rule 'd.k_v': unknown algorithm 'leaky_bucket' (expected fixed_window, sliding_window or token_bucket)",
    );
    // Names are exact (no case folding, unlike units).
    expect(errorOf('{ unit: minute, requests_per_unit: 1, algorithm: Sliding_Window }')).toMatch(
      /unknown algorithm 'Sliding_Window'/,
    );
  });

  it('burst on a rule that is not a token bucket, or 0, or with requests_per_unit 0', () => {
    expect(errorOf('{ unit: minute, requests_per_unit: 1, algorithm: sliding_window, burst: 3 }')).toBe(
      "config.f.yaml: rule 'd.k_v': burst is only allowed with algorithm token_bucket (algorithm is sliding_window)",
    );
    expect(errorOf('{ unit: minute, requests_per_unit: 1, burst: 3 }')).toMatch(/algorithm is fixed_window/);
    expect(errorOf('{ unit: minute, requests_per_unit: 1, algorithm: token_bucket, burst: 0 }')).toBe(
      "config.f.yaml: rule 'd.k_v': burst must be at least 1, got 0",
    );
    expect(errorOf('{ unit: minute, requests_per_unit: 0, algorithm: token_bucket, burst: 2 }')).toMatch(
      /burst needs requests_per_unit above 0/,
    );
  });

  it('unit_multiplier 0, or a type error in it (yaml.v2 wording)', () => {
    expect(errorOf('{ unit: second, requests_per_unit: 1, unit_multiplier: 0 }')).toBe(
      "config.f.yaml: rule 'd.k_v': unit_multiplier must be at least 1, got 0",
    );
    expect(errorOf('{ unit: second, requests_per_unit: 1, unit_multiplier: five }')).toMatch(
      /cannot unmarshal !!str `five` into uint32/,
    );
  });

  it('an unlimited rule takes none of them', () => {
    expect(errorOf('{ unlimited: true, algorithm: sliding_window }')).toBe(
      "config.f.yaml: rule 'd.k_v': should not specify algorithm 'sliding_window' when unlimited",
    );
    expect(errorOf('{ unlimited: true, unit_multiplier: 2 }')).toMatch(/unit_multiplier when unlimited/);
    expect(errorOf('{ unlimited: true, burst: 2 }')).toMatch(/burst when unlimited/);
  });

  it('the new keys outside a rate_limit block are unknown keys, as in the reference', () => {
    const text = 'domain: d\ndescriptors:\n  - key: k\n    algorithm: sliding_window\n';
    const built = buildConfig([{ name: 'config.f.yaml', text }], new StatsRegistry(), {
      mergeDomainConfig: false,
    });
    expect(built.ok ? '' : built.error).toBe("config.f.yaml: config error, unknown key 'algorithm'");
  });

  it('a token bucket too large to count exactly in 53 bits', () => {
    expect(errorOf('{ unit: year, requests_per_unit: 1, algorithm: token_bucket, burst: 1000000 }')).toMatch(
      /burst 1000000 over a window of 31536000 s is too large/,
    );
  });

  it('an algorithm the backend cannot run names the rule and the backend', () => {
    const support = { backend: 'memcache', supported: new Set(['fixed_window'] as const) };
    expect(
      errorOf('{ unit: minute, requests_per_unit: 1, algorithm: token_bucket }', {
        algorithmSupport: support,
      }),
    ).toBe("config.f.yaml: rule 'd.k_v': algorithm 'token_bucket' is not supported by the memcache backend");
    expect(build('{ unit: minute, requests_per_unit: 1 }', { algorithmSupport: support }).ok).toBe(true);
  });

  it('valid rules load; /rlconfig shows what is not a plain fixed window', () => {
    const built = buildConfig(
      [
        {
          name: 'f',
          text: `domain: d
descriptors:
  - key: a
    rate_limit: { unit: minute, requests_per_unit: 5 }
  - key: b
    rate_limit: { unit: second, requests_per_unit: 5, unit_multiplier: 30, algorithm: sliding_window }
  - key: c
    rate_limit: { unit: minute, requests_per_unit: 5, algorithm: token_bucket, burst: 20 }
  - key: e
    rate_limit: { unit: minute, requests_per_unit: 5, algorithm: fixed_window, unit_multiplier: 5 }
`,
        },
      ],
      new StatsRegistry(),
      { mergeDomainConfig: false },
    );
    expect(built.ok).toBe(true);
    if (!built.ok) return;
    expect(dumpConfig(built.config)).toBe(
      [
        'd.a: unit=MINUTE requests_per_unit=5, shadow_mode: false, quota_mode: false',
        'd.b: unit=SECOND requests_per_unit=5, shadow_mode: false, quota_mode: false, algorithm: sliding_window, unit_multiplier: 30',
        'd.c: unit=MINUTE requests_per_unit=5, shadow_mode: false, quota_mode: false, algorithm: token_bucket, burst: 20',
        'd.e: unit=MINUTE requests_per_unit=5, shadow_mode: false, quota_mode: false, algorithm: fixed_window, unit_multiplier: 5',
        '',
      ].join('\n'),
    );
    const c = built.config.domains.get('d')!.children.get('c')!.limit!;
    expect(c).toMatchObject({ algorithm: 'token_bucket', burst: 20, windowSeconds: 60, unitMultiplier: 1 });
  });
});
