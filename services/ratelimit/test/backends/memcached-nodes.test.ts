import { type AddressInfo, createConnection, createServer } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { type MemcachedServer, startMemcachedNodes } from '@platform/testkit/memcached';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBackend } from '../../src/backends/create.js';
import { MemcachedBackend } from '../../src/backends/memcached.js';
import { parseBackendSettings } from '../../src/settings/backend.js';
import { startDnsServer, type TestDnsServer } from './dns-server.js';
import { rawGet } from './memcached-raw.js';

const op = (key: string, hits = 1) => ({ key, hits, ttlSeconds: 60, perSecond: false });

async function eventually(check: () => boolean | Promise<boolean>): Promise<void> {
  for (let i = 0; i < 100; i++) {
    if (await check()) return;
    await sleep(100);
  }
  throw new Error('condition not reached in 10 s');
}

describe('memcached node choice, MEMSTORE_SRV and MEMSTORE_MAX_IDLE_CONNS (three real nodes)', () => {
  let nodes: MemcachedServer[];
  let dns: TestDnsServer;
  const open = (env: Record<string, string>) =>
    createBackend(parseBackendSettings({ BACKEND_TYPE: 'memstore', ...env })) as MemcachedBackend;

  beforeAll(async () => {
    nodes = await startMemcachedNodes(3);
    dns = await startDnsServer();
    // Three targets, answered in an order that is not the sorted one.
    dns.srv.set('_memcache._tcp.rl.test', [
      { target: 'mc-c.rl.test', port: nodes[2]!.port },
      { target: 'mc-a.rl.test', port: nodes[0]!.port },
      { target: 'mc-b.rl.test', port: nodes[1]!.port },
    ]);
    for (const name of ['mc-a', 'mc-b', 'mc-c']) dns.a.set(`${name}.rl.test`, '127.0.0.1');
  });
  afterAll(async () => {
    await dns.close();
    for (const n of nodes) await n.stop();
  });

  it('two instances with the same node list put each key on the same node, and share its count', async () => {
    const hostPorts = nodes.map((n) => n.hostPort).join(',');
    const a = open({ MEMSTORE_HOST_PORT: hostPorts });
    const b = open({ MEMSTORE_HOST_PORT: hostPorts });
    try {
      const keys = Array.from({ length: 30 }, (_, i) => `choice-${process.pid}-${i}`);
      await a.increment(keys.map((k) => op(k, 2)));
      await a.close(); // waits for the asynchronous increments
      expect(await b.read(keys.map((k) => op(k)))).toEqual(keys.map(() => 2));
      const used = new Set<number>();
      for (const key of keys) {
        const index = b.nodeIndexOf(key);
        used.add(index);
        // The key exists on exactly the node both instances chose.
        const onNodes = await Promise.all(nodes.map((n) => rawGet(n.port, key)));
        expect(onNodes.map((v) => v !== undefined)).toEqual(nodes.map((_, i) => i === index));
      }
      expect(used.size).toBe(3); // 30 keys spread over all three nodes
    } finally {
      await b.close();
    }
  });

  it('MEMSTORE_SRV: targets sorted, so instances agree whatever order DNS answers in', async () => {
    const a = open({ MEMSTORE_SRV: '_memcache._tcp.rl.test', MEMSTORE_SRV_DNS_SERVERS: dns.address });
    const b = open({ MEMSTORE_HOST_PORT: nodes.map((n) => n.hostPort).join(',') });
    try {
      expect(await a.ready()).toBe(true);
      expect(a.nodeIds()).toEqual(nodes.map((n, i) => `mc-${'abc'[i]}.rl.test:${n.port}`));
      const keys = Array.from({ length: 10 }, (_, i) => `srv-${process.pid}-${i}`);
      await a.increment(keys.map((k) => op(k, 3)));
      await a.close();
      expect(await b.read(keys.map((k) => op(k)))).toEqual(keys.map(() => 3));
    } finally {
      await b.close();
    }
  });

  it('MEMSTORE_SRV_REFRESH re-resolves; a failed lookup keeps the old list', async () => {
    const b = open({
      MEMSTORE_SRV: '_memcache._tcp.rl.test',
      MEMSTORE_SRV_DNS_SERVERS: dns.address,
      MEMSTORE_SRV_REFRESH: '200ms',
    });
    const saved = dns.srv.get('_memcache._tcp.rl.test')!;
    try {
      expect(await b.ready()).toBe(true);
      expect(b.nodeIds()).toHaveLength(3);
      dns.failing = true;
      const before = dns.srvQueries;
      await eventually(() => dns.srvQueries >= before + 2);
      expect(b.nodeIds()).toHaveLength(3);
      expect(await b.increment([op(`kept-${process.pid}`)])).toEqual([1]);
      dns.failing = false;
      dns.srv.set('_memcache._tcp.rl.test', [{ target: 'mc-b.rl.test', port: nodes[1]!.port }]);
      await eventually(() => b.nodeIds().length === 1);
      expect(b.nodeIds()).toEqual([`mc-b.rl.test:${nodes[1]!.port}`]);
      const key = `one-node-${process.pid}`;
      await b.increment([op(key, 4)]);
      await eventually(async () => (await rawGet(nodes[1]!.port, key)) === '4');
    } finally {
      dns.srv.set('_memcache._tcp.rl.test', saved);
      dns.failing = false;
      await b.close();
    }
  });

  it('MEMSTORE_SRV that does not resolve: not ready, calls fail with an error', async () => {
    const b = open({ MEMSTORE_SRV: '_none._tcp.rl.test', MEMSTORE_SRV_DNS_SERVERS: dns.address });
    try {
      expect(await b.ready()).toBe(false);
      await expect(b.read([op('x')])).rejects.toThrow(/no nodes/);
    } finally {
      await b.close();
    }
  });

  it('a read is one multi-get per node (one write per node), increments follow incr/add', async () => {
    const writes: string[] = [];
    const proxy = createServer((client) => {
      const upstream = createConnection(nodes[0]!.port, '127.0.0.1');
      client.on('data', (chunk) => {
        writes.push(chunk.toString('latin1'));
        upstream.write(chunk);
      });
      upstream.pipe(client);
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
    });
    await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
    const port = (proxy.address() as AddressInfo).port;
    const b = open({ MEMSTORE_HOST_PORT: `127.0.0.1:${port}` });
    try {
      const keys = Array.from({ length: 5 }, (_, i) => `mget-${process.pid}-${i}`);
      expect(await b.read(keys.map((k) => op(k)))).toEqual([0, 0, 0, 0, 0]);
      expect(writes).toEqual([`get ${keys.join(' ')}\r\n`]);
      writes.length = 0;
      await b.increment([op(keys[0]!, 2)]);
      await b.close();
      expect(writes.join('')).toBe(`get ${keys[0]}\r\nincr ${keys[0]} 2\r\nadd ${keys[0]} 0 60 1\r\n2\r\n`);
      expect(await rawGet(nodes[0]!.port, keys[0]!)).toBe('2');
    } finally {
      await b.close();
      proxy.close();
    }
  });

  it('a lost add race (another instance created the key first) increments again', async () => {
    const key = `race-${process.pid}`;
    // A proxy that, when it sees our `add`, first creates the key itself at 9 (the other instance).
    const proxy = createServer((client) => {
      const upstream = createConnection(nodes[2]!.port, '127.0.0.1');
      client.on('data', async (chunk) => {
        if (chunk.toString('latin1').startsWith(`add ${key} `)) {
          client.pause();
          const other = new MemcachedBackend({
            nodes: { kind: 'list', hostPorts: nodes[2]!.hostPort },
            maxIdleConns: 1,
            tls: undefined,
            timeoutMs: 1000,
            healthCheckActiveConnection: false,
          });
          await other.increment([op(key, 9)]);
          await other.close();
          client.resume();
        }
        upstream.write(chunk);
      });
      upstream.pipe(client);
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
    });
    await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
    const b = open({ MEMSTORE_HOST_PORT: `127.0.0.1:${(proxy.address() as AddressInfo).port}` });
    try {
      expect(await b.increment([op(key, 2)])).toEqual([2]); // decided on the read (0) + 2
      await b.close();
      expect(await rawGet(nodes[2]!.port, key)).toBe('11'); // 9 from the other + our 2, not lost
    } finally {
      await b.close();
      proxy.close();
    }
  });

  it('MEMSTORE_MAX_IDLE_CONNS bounds the connections kept per node', async () => {
    const b = open({ MEMSTORE_HOST_PORT: nodes[0]!.hostPort, MEMSTORE_MAX_IDLE_CONNS: '1' });
    const c = open({ MEMSTORE_HOST_PORT: nodes[0]!.hostPort });
    try {
      const burst = (x: MemcachedBackend) =>
        Promise.all(Array.from({ length: 8 }, (_, i) => x.read([op(`idle-${i}`)])));
      await burst(b);
      await burst(c);
      expect(b.idleConnections()).toEqual([1]);
      expect(c.idleConnections()).toEqual([2]); // the default
    } finally {
      await b.close();
      await c.close();
    }
  });

  it('MEMSTORE_HOST_PORT and MEMSTORE_SRV are exclusive; one is required', () => {
    expect(() =>
      parseBackendSettings({ BACKEND_TYPE: 'memstore', MEMSTORE_HOST_PORT: 'a:1', MEMSTORE_SRV: 'x' }),
    ).toThrow(/exclusive/);
    expect(() => parseBackendSettings({ BACKEND_TYPE: 'memstore' })).toThrow(
      /MEMSTORE_HOST_PORT or MEMSTORE_SRV/,
    );
    expect(() =>
      parseBackendSettings({ BACKEND_TYPE: 'memstore', MEMSTORE_SRV: 'x', MEMSTORE_SRV_REFRESH: 'soon' }),
    ).toThrow(/MEMSTORE_SRV_REFRESH/);
  });
});
