import { setTimeout as sleep } from 'node:timers/promises';
import { type RedisServer, startRedis, startRedisCluster, startRedisSentinel } from '@platform/testkit/redis';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBackend } from '../../src/backends/create.js';
import { parseBackendSettings } from '../../src/settings/backend.js';
import { counterBackendContract } from './contract.js';

const wait = (s: number) => sleep(s * 1000 + 100);

counterBackendContract('redis cluster (KVSTORE_TYPE=cluster)', async () => {
  const cluster = await startRedisCluster(3);
  const backend = createBackend(
    parseBackendSettings({ KVSTORE_URL: cluster.hostPorts, KVSTORE_TYPE: 'cluster' }),
  );
  return {
    backend,
    advanceSeconds: wait,
    close: async () => {
      await backend.close();
      await cluster.stop();
    },
  };
});

counterBackendContract('redis sentinel (KVSTORE_TYPE=sentinel)', async () => {
  const setup = await startRedisSentinel(2, 'mymaster');
  const backend = createBackend(
    parseBackendSettings({
      KVSTORE_URL: setup.sentinelUrl,
      KVSTORE_TYPE: 'sentinel',
      KVSTORE_POOL_SIZE: '2',
    }),
  );
  return {
    backend,
    advanceSeconds: wait,
    close: async () => {
      await backend.close();
      await setup.stop();
    },
  };
});

let perSecondServers: RedisServer[] = [];
counterBackendContract('redis with a per-second server (KVSTORE_PERSECOND=true)', async () => {
  perSecondServers = [await startRedis({ fresh: true }), await startRedis({ fresh: true })];
  const [main, second] = perSecondServers as [RedisServer, RedisServer];
  const backend = createBackend(
    parseBackendSettings({
      KVSTORE_URL: `127.0.0.1:${main.port}`,
      KVSTORE_PERSECOND: 'true',
      KVSTORE_PERSECOND_URL: `127.0.0.1:${second.port}`,
      KVSTORE_POOL_SIZE: '1',
      KVSTORE_PERSECOND_POOL_SIZE: '1',
    }),
  );
  return {
    backend,
    advanceSeconds: wait,
    close: async () => {
      await backend.close();
      for (const s of perSecondServers) await s.stop();
    },
  };
});

describe('KVSTORE_PERSECOND routing', () => {
  let main: RedisServer;
  let second: RedisServer;
  beforeAll(async () => {
    main = await startRedis({ fresh: true });
    second = await startRedis({ fresh: true });
  });
  afterAll(async () => {
    await main.stop();
    await second.stop();
  });

  it('SECOND-unit keys go to the per-second server, others to the main one, in op order', async () => {
    const backend = createBackend(
      parseBackendSettings({
        KVSTORE_URL: `127.0.0.1:${main.port}`,
        KVSTORE_PERSECOND: 'true',
        KVSTORE_PERSECOND_URL: `127.0.0.1:${second.port}`,
      }),
    );
    try {
      expect(await backend.ready()).toBe(true);
      expect(
        await backend.increment([
          { key: 'm1', hits: 1, ttlSeconds: 60, perSecond: false },
          { key: 's1', hits: 2, ttlSeconds: 1, perSecond: true },
          { key: 'm2', hits: 3, ttlSeconds: 60, perSecond: false },
        ]),
      ).toEqual([1, 2, 3]);
      const a = new Redis({ port: main.port });
      const b = new Redis({ port: second.port });
      expect(await a.keys('*')).toEqual(expect.arrayContaining(['m1', 'm2']));
      expect(await a.exists('s1')).toBe(0);
      expect(await b.keys('*')).toEqual(['s1']);
      a.disconnect();
      b.disconnect();
    } finally {
      await backend.close();
    }
  });
});
