import { setTimeout as sleep } from 'node:timers/promises';
import { type MemcachedServer, startMemcached, startMemcachedNodes } from '@platform/testkit/memcached';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBackend } from '../../src/backends/create.js';
import { parseBackendSettings } from '../../src/settings/backend.js';
import { startApp } from '../integration/app-harness.js';
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
      for (const key of ['x'.repeat(251), 'é'.repeat(126), 'has space', 'tab\there', 'nl\n']) {
        await expect(backend.increment([{ key, hits: 1, ttlSeconds: 10, perSecond: false }])).rejects.toThrow(
          /memcached key/,
        );
      }
      expect(
        await backend.increment([{ key: 'x'.repeat(250), hits: 1, ttlSeconds: 10, perSecond: false }]),
      ).toEqual([1]);
      // Non-ASCII keys within 250 bytes round-trip (multi-get replies are matched by UTF-8 key).
      const utf8 = { key: `ключ-${'é'.repeat(100)}`, hits: 2, ttlSeconds: 10, perSecond: false };
      expect(await backend.increment([utf8])).toEqual([2]);
      expect(await backend.increment([utf8])).toEqual([4]);
    } finally {
      await backend.close();
    }
  });

  it('through the service, a key memcached cannot hold fails the call with the key rule, even with BACKEND_FAILURE_MODE=allow', async () => {
    const app = await startApp(
      {
        'r.yaml':
          'domain: d\ndescriptors:\n  - key: k\n    rate_limit: { unit: minute, requests_per_unit: 5 }\n',
      },
      { BACKEND_TYPE: 'memstore', MEMSTORE_HOST_PORT: server.hostPort, BACKEND_FAILURE_MODE: 'allow' },
    );
    const call = (value: string) =>
      fetch(`${app.http}/json`, {
        method: 'POST',
        body: JSON.stringify({ domain: 'd', descriptors: [{ entries: [{ key: 'k', value }] }] }),
      }).then(async (r) => ({ status: r.status, text: await r.text() }));
    try {
      // HTTP says Bad Request with the call error (the reference: the status text only).
      const refused = await call('has space');
      expect(refused.status).toBe(400);
      expect(refused.text).toMatch(/^Bad Request: /);
      expect((await call('v'.repeat(300))).status).toBe(400);
      expect((await call('fine')).status).toBe(200);
    } finally {
      await app.close();
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
