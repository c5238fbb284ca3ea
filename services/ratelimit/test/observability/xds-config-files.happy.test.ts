import { describe, expect, it } from 'vitest';
import { buildConfig, dumpConfig } from '../../src/rules/config-tree.js';
import { snapshotToConfigFiles } from '../../src/runtime/xds/config-files.js';
import { decodeRateLimitConfig, encodeRateLimitConfig } from '../../src/runtime/xds/protos.js';
import { StatsRegistry } from '../../src/stats/registry.js';

/** Resources as the management server sends them: encoded, then decoded by the client. */
const resource = (config: object) => decodeRateLimitConfig(encodeRateLimitConfig(config).value);

describe('xDS snapshot through the core config loader', () => {
  it('quota_mode (field 7) and metadata (field 8, a Struct) arrive as in a YAML file', () => {
    const files = snapshotToConfigFiles([
      resource({
        name: 'q',
        domain: 'q',
        descriptors: [
          {
            key: 'user',
            quota_mode: true,
            metadata: {
              fields: {
                tier: { stringValue: 'gold' },
                limits: { structValue: { fields: { n: { numberValue: 2 } } } },
              },
            },
            rate_limit: { unit: 'MINUTE', requests_per_unit: 5 },
          },
        ],
      }),
    ]);
    const built = buildConfig(files, new StatsRegistry(), { mergeDomainConfig: false });
    if (!built.ok) throw new Error(built.error);
    const node = built.config.domains.get('q')!.children.get('user')!;
    expect(node.limit?.quotaMode).toBe(true);
    expect(node.metadata).toEqual({ tier: 'gold', limits: { n: 2 } });
  });

  it('a valid snapshot builds the same rules a YAML file would', () => {
    const files = snapshotToConfigFiles([
      resource({
        name: 'edge',
        domain: 'edge',
        descriptors: [
          { key: 'remote_address', rate_limit: { unit: 'SECOND', requests_per_unit: 5 }, shadow_mode: true },
          { key: 'path', value: 'yes', rate_limit: { unit: 'MINUTE', requests_per_unit: 100 } },
          { key: 'internal', rate_limit: { unlimited: true } },
          {
            key: 'parent',
            descriptors: [{ key: 'child', rate_limit: { unit: 'HOUR', requests_per_unit: 7 } }],
          },
        ],
      }),
    ]);
    expect(files[0]?.name).toBe('edge');
    const built = buildConfig(files, new StatsRegistry(), { mergeDomainConfig: false });
    if (!built.ok) throw new Error(built.error);
    expect(dumpConfig(built.config)).toBe(
      [
        'edge.internal: unit=UNKNOWN requests_per_unit=0, shadow_mode: false, quota_mode: false',
        'edge.parent.child: unit=HOUR requests_per_unit=7, shadow_mode: false, quota_mode: false',
        'edge.path_yes: unit=MINUTE requests_per_unit=100, shadow_mode: false, quota_mode: false',
        'edge.remote_address: unit=SECOND requests_per_unit=5, shadow_mode: true, quota_mode: false',
        '',
      ].join('\n'),
    );
  });

  it('a bad resource gives the loader error prefixed with the resource name', () => {
    const files = snapshotToConfigFiles([
      resource({
        name: 'bad-unit',
        domain: 'd',
        descriptors: [{ key: 'k', rate_limit: { requests_per_unit: 5 } }],
      }),
    ]);
    const built = buildConfig(files, new StatsRegistry(), { mergeDomainConfig: false });
    expect(built).toEqual({ ok: false, error: "bad-unit: invalid rate limit unit 'UNKNOWN'" });
    const dup = snapshotToConfigFiles([
      resource({ name: 'a', domain: 'd' }),
      resource({ name: 'b', domain: 'd' }),
    ]);
    expect(buildConfig(dup, new StatsRegistry(), { mergeDomainConfig: false })).toEqual({
      ok: false,
      error: "b: duplicate domain 'd' in config file",
    });
  });
});
