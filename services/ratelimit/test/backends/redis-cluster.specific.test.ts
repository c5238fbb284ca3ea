import { setTimeout as sleep } from 'node:timers/promises';
import { type RedisCluster, startRedisCluster } from '@platform/testkit/redis';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBackend } from '../../src/backends/create.js';
import { parseSettings } from '../../src/config.js';
import { parseBackendSettings } from '../../src/settings/backend.js';

const op = (key: string) => ({ key, hits: 1, ttlSeconds: 60, perSecond: false });

describe('redis cluster: KVSTORE_CLUSTER_PIPELINE_PARALLELISM (REDIS_CLUSTER_PIPELINE_PARALLELISM)', () => {
  let cluster: RedisCluster;
  let masters: Redis[];
  beforeAll(async () => {
    cluster = await startRedisCluster(3);
    masters = cluster.nodes.map((n) => new Redis({ host: n.host, port: n.port }));
  });
  afterAll(async () => {
    for (const m of masters) m.disconnect();
    await cluster.stop();
  });

  /** A key whose slot is served by master `index`. */
  async function keyOn(index: number, tag: string): Promise<string> {
    const slots = await masters[0]!.cluster('SLOTS');
    const port = cluster.nodes[index]!.port;
    for (let i = 0; ; i++) {
      const key = `${tag}-${i}`;
      const slot = Number(await masters[0]!.cluster('KEYSLOT', key));
      if (slots.some(([from, to, master]) => slot >= from && slot <= to && master?.[1] === port)) return key;
    }
  }

  it('0 (the pool size): with one master paused, the key on another master is already counted', async () => {
    const slow = await keyOn(0, `slow-${process.pid}`);
    const fast = await keyOn(1, `fast-${process.pid}`);
    const backend = createBackend(
      parseBackendSettings({
        KVSTORE_URL: cluster.hostPorts,
        KVSTORE_TYPE: 'cluster',
        BACKEND_TIMEOUT_MS: '10000',
        KVSTORE_CLUSTER_PIPELINE_PARALLELISM: '0',
      }),
    );
    try {
      expect(await backend.ready()).toBe(true);
      await masters[0]!.client('PAUSE', 20000, 'WRITE');
      let settled = false;
      // The slow key comes first: a slot-after-slot implementation would not reach the fast one.
      const call = backend.increment([op(slow), op(fast)]).finally(() => {
        settled = true;
      });
      for (let i = 0; i < 100 && (await masters[1]!.get(fast)) !== '1'; i++) await sleep(50);
      expect(await masters[1]!.get(fast)).toBe('1');
      expect(settled).toBe(false); // still waiting for the paused master
      await masters[0]!.client('UNPAUSE');
      expect(await call).toEqual([1, 1]);
    } finally {
      await masters[0]!.client('UNPAUSE');
      await backend.close();
    }
  });

  it('1 (the default, as the reference): the keys go one after another', async () => {
    const slow = await keyOn(0, `serial-slow-${process.pid}`);
    const fast = await keyOn(1, `serial-fast-${process.pid}`);
    const backend = createBackend(
      parseSettings({ REDIS_URL: cluster.hostPorts, REDIS_TYPE: 'cluster', REDIS_TIMEOUT: '10s' }).backend,
    );
    try {
      expect(await backend.ready()).toBe(true);
      await masters[0]!.client('PAUSE', 20000, 'WRITE');
      const call = backend.increment([op(slow), op(fast)]);
      // Once the slow key's command is held by the paused master (a blocked client there), a
      // parallel implementation would already have sent the fast one; a serial one has not.
      const blocked = async () => /blocked_clients:[1-9]/.test(await masters[0]!.info('clients'));
      for (let i = 0; i < 100 && !(await blocked()); i++) await sleep(50);
      expect(await blocked()).toBe(true);
      expect(await masters[1]!.get(fast)).toBeNull(); // not sent before the slow key answered
      await masters[0]!.client('UNPAUSE');
      expect(await call).toEqual([1, 1]);
    } finally {
      await masters[0]!.client('UNPAUSE');
      await backend.close();
    }
  });
});
