import { randomUUID } from 'node:crypto';
import { type RedisCluster, startRedisCluster, startRedisSentinel } from '@platform/testkit/redis';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBackend } from '../../src/backends/create.js';
import type { CounterBackend } from '../../src/backends/types.js';
import { Code } from '../../src/proto/messages.js';
import { parseBackendSettings } from '../../src/settings/backend.js';
import { desc, harness, ok, req } from '../helpers.js';
import { algorithmProperties } from './algorithm-properties.js';

/**
 * Each algorithm on a real 3-master Redis Cluster and behind sentinels: the same properties and
 * the same decisions as the in-process store. One cluster for the file (three fewer redis-server
 * processes than one per block, on a machine that runs three test files at once).
 */
let clusterStarting: Promise<RedisCluster> | undefined;
const sharedCluster = (): Promise<RedisCluster> => {
  clusterStarting ??= startRedisCluster(3);
  return clusterStarting;
};
afterAll(async () => {
  await (await clusterStarting)?.stop();
});

algorithmProperties(
  'redis cluster (3 masters; one script call per key)',
  async () => {
    const cluster = await sharedCluster();
    const backend = createBackend(
      parseBackendSettings({ KVSTORE_URL: cluster.hostPorts, KVSTORE_TYPE: 'cluster' }),
    );
    return { backend, close: () => backend.close() };
  },
  { compareWithMemory: true },
);

algorithmProperties(
  'redis sentinel',
  async () => {
    const setup = await startRedisSentinel(2, 'mymaster');
    const backend = createBackend(
      parseBackendSettings({ KVSTORE_URL: setup.sentinelUrl, KVSTORE_TYPE: 'sentinel' }),
    );
    return {
      backend,
      close: async () => {
        await backend.close();
        await setup.stop();
      },
    };
  },
  { compareWithMemory: true },
);

describe('redis cluster: descriptors of one request on different masters', () => {
  let cluster: RedisCluster;
  let backend: CounterBackend;
  beforeAll(async () => {
    cluster = await sharedCluster();
    backend = createBackend(
      parseBackendSettings({ KVSTORE_URL: cluster.hostPorts, KVSTORE_TYPE: 'cluster' }),
    );
    expect(await backend.ready()).toBe(true);
  });
  afterAll(async () => {
    await backend.close();
  });

  it('every algorithm counts, each key stored on the master owning its hash tag', async () => {
    const yaml = `domain: d
descriptors:
  - key: s
    rate_limit: { unit: minute, requests_per_unit: 2, algorithm: sliding_window }
  - key: t
    rate_limit: { unit: minute, requests_per_unit: 2, algorithm: token_bucket }
  - key: f
    rate_limit: { unit: minute, requests_per_unit: 2 }
`;
    const h = harness(yaml, { backend });
    h.clock.ms = 1_700_000_000_000;
    h.clock.now = 1_700_000_000;
    // 16 random values: all on one of the 3 masters has a chance of 3 x 3^-16 (6 had 1 in 243,
    // and a CI run drew it).
    const values = Array.from({ length: 16 }, () => randomUUID());
    const request = req(
      'd',
      values.flatMap((v) => [desc({ s: v }), desc({ t: v }), desc({ f: v })]),
    );
    for (let i = 0; i < 2; i++) expect((await ok(h, request)).overallCode).toBe(Code.OK);
    const refused = await ok(h, request);
    expect(refused.statuses.every((s) => s.code === Code.OVER_LIMIT)).toBe(true);
    // The sliding-window keys are spread over the masters (16 keys, 3 masters).
    const owners = new Set<number>();
    for (const v of values) {
      for (const [i, node] of cluster.nodes.entries()) {
        const raw = new Redis({ host: node.host, port: node.port });
        try {
          if ((await raw.exists(`{d_s_${v}_}sw60`)) === 1) owners.add(i);
        } catch {
          // MOVED: another master owns it
        } finally {
          raw.disconnect();
        }
      }
    }
    expect(owners.size).toBeGreaterThan(1);
  });
});
