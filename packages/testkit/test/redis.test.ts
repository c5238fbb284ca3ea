import { afterAll, describe, expect, it } from 'vitest';
import { startRedis, startRedisCluster, startRedisSentinel } from '../src/redis.js';
import { rawCommand, respCommand } from '../src/wire.js';

const send = (port: number, ...parts: string[]) => rawCommand('127.0.0.1', port, respCommand(...parts));

describe('startRedis', () => {
  it('starts a private server that answers, then stops and restarts on the same port', async () => {
    const redis = await startRedis({ fresh: true });
    expect(redis.owned).toBe(true);
    expect(await send(redis.port, 'SET', 'k', 'v')).toBe('+OK\r\n');
    await redis.stop();
    await expect(send(redis.port, 'PING')).rejects.toThrow();
    await redis.restart();
    expect(await send(redis.port, 'PING')).toBe('+PONG\r\n');
    // nothing is kept on disk, so the key is gone after the restart
    expect(await send(redis.port, 'GET', 'k')).toBe('$-1\r\n');
    await redis.stop();
  });

  it('loads ACL users', async () => {
    const redis = await startRedis({ aclUsers: ['user default off', 'user app on >pw ~* +@all'] });
    expect(await send(redis.port, 'PING')).toMatch(/^-NOAUTH/);
    expect(await send(redis.port, 'AUTH', 'app', 'pw')).toBe('+OK\r\n');
    await redis.stop();
  });
});

describe('startRedisCluster', () => {
  const cleanup: (() => Promise<void>)[] = [];
  afterAll(async () => {
    for (const fn of cleanup) await fn();
  });

  it('builds a 3-master cluster covering every slot', async () => {
    const cluster = await startRedisCluster(3);
    cleanup.push(() => cluster.stop());
    expect(cluster.nodes).toHaveLength(3);
    const info = await send(cluster.nodes[0]!.port, 'CLUSTER', 'INFO');
    expect(info).toContain('cluster_slots_assigned:16384');
    expect(info).toContain('cluster_known_nodes:3');
  });
});

describe('startRedisSentinel', () => {
  it('reports the master address through every sentinel', async () => {
    const setup = await startRedisSentinel(2, 'mymaster');
    try {
      expect(setup.sentinelUrl.split(',')).toHaveLength(3);
      for (const sentinel of setup.sentinels) {
        const answer = await send(sentinel.port, 'SENTINEL', 'get-master-addr-by-name', 'mymaster');
        expect(answer).toContain(String(setup.master.port));
      }
    } finally {
      await setup.stop();
    }
  });
});

describe('startRedisCluster restart', () => {
  it('brings a stopped master back at the same address, and the cluster is whole again', async () => {
    const cluster = await startRedisCluster(3);
    try {
      const port = cluster.nodes[1]!.port;
      await cluster.stopNode(1);
      await expect(send(port, 'PING')).rejects.toThrow();
      await cluster.restartNode(1);
      expect(await send(port, 'PING')).toBe('+PONG\r\n');
      for (const node of cluster.nodes) {
        const info = await send(node.port, 'CLUSTER', 'INFO');
        expect(info).toContain('cluster_state:ok');
        expect(info).toContain('cluster_known_nodes:3');
      }
      // The restarted node still announces the stable address (the front's port) to clients.
      expect(await send(port, 'CLUSTER', 'MYID')).toMatch(/^\$40\r\n/);
      expect(await send(cluster.nodes[0]!.port, 'CLUSTER', 'NODES')).toContain(`127.0.0.1:${port}@`);
    } finally {
      await cluster.stop();
    }
  }, 60_000);
});
