import { setTimeout as sleep } from 'node:timers/promises';
import { type MemcachedServer, startMemcached, startMemcachedNodes } from '@platform/testkit/memcached';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBackend } from '../../src/backends/create.js';
import { parseBackendSettings } from '../../src/settings/backend.js';
import { counterBackendContract } from './contract.js';

function memcachedContract(count: number): void {
  let nodes: MemcachedServer[] = [];
  counterBackendContract(`memcached, ${count} node(s) (BACKEND_TYPE=memstore)`, async () => {
    nodes = await startMemcachedNodes(count);
    const backend = createBackend(
      parseBackendSettings({
        BACKEND_TYPE: 'memstore',
        MEMSTORE_HOST_PORT: nodes.map((n) => n.hostPort).join(','),
      }),
    );
    return {
      backend,
      advanceSeconds: (s) => sleep(s * 1000 + 1100), // memcached expiry has one-second granularity
      close: async () => {
        await backend.close();
        for (const n of nodes) await n.stop();
      },
    };
  });
}
memcachedContract(1);
memcachedContract(3);

describe('memcached specifics', () => {
  let server: MemcachedServer;
  beforeAll(async () => {
    server = await startMemcached({ fresh: true });
  });
  afterAll(async () => {
    await server.stop();
  });

  it('rejects keys longer than 250 characters or with whitespace/control characters', async () => {
    const backend = createBackend(
      parseBackendSettings({ BACKEND_TYPE: 'memstore', MEMSTORE_HOST_PORT: server.hostPort }),
    );
    try {
      for (const key of ['x'.repeat(251), 'has space', 'tab\there', 'nl\n']) {
        await expect(backend.increment([{ key, hits: 1, ttlSeconds: 10, perSecond: false }])).rejects.toThrow(
          /memcached key/,
        );
      }
      expect(
        await backend.increment([{ key: 'x'.repeat(250), hits: 1, ttlSeconds: 10, perSecond: false }]),
      ).toEqual([1]);
    } finally {
      await backend.close();
    }
  });

  it('health follows the node with the active check, and recovers', async () => {
    const own = await startMemcached({ fresh: true });
    const backend = createBackend(
      parseBackendSettings({
        BACKEND_TYPE: 'memcache',
        MEMSTORE_HOST_PORT: own.hostPort,
        KVSTORE_HEALTH_CHECK_ACTIVE_CONNECTION: 'true',
        BACKEND_TIMEOUT_MS: '300',
      }),
    );
    try {
      expect(await backend.ready()).toBe(true);
      await own.stop();
      while (backend.healthy()) await sleep(100);
      await expect(backend.read([{ key: 'k', hits: 0, ttlSeconds: 1, perSecond: false }])).rejects.toThrow();
      await own.restart();
      while (!backend.healthy()) await sleep(100);
    } finally {
      await backend.close();
      await own.stop();
    }
  });
});
