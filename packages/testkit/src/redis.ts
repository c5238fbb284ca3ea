import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ConnectionOptions } from 'node:tls';
import { requireBinary } from './binaries.js';
import { type FrontedServer, type Launch, launchOnFreePort, startFronted } from './fronted.js';
import { freePort } from './ports.js';
import { type ManagedProcess, spawnManaged, waitUntilReady } from './process.js';
import { rawCommand, respCommand } from './wire.js';

const DEBIAN_PACKAGE = 'redis-server';

export interface RedisServer {
  readonly host: string;
  readonly port: number;
  /** `redis://host:port` (or `rediss://` with TLS). */
  readonly url: string;
  /** True when this handle started the server (false when it came from REDIS_URL). */
  readonly owned: boolean;
  /** Stops the server; data is lost. A no-op for a server the testkit did not start. */
  stop(): Promise<void>;
  /**
   * Starts it again with the same settings, reachable at the same `port`/`url` (for outage tests).
   * That port is a front held by the test process (see fronted.ts): while the server is down a
   * connection to it is reset right after it is accepted, rather than refused.
   */
  restart(): Promise<void>;
}

export interface RedisTlsFiles {
  certFile: string;
  keyFile: string;
  caFile: string;
  /** Require client certificates (mutual TLS). @default false */
  authClients?: boolean;
}

export interface StartRedisOptions {
  /** Always start a private server, even when REDIS_URL is set (needed when a test stops it). @default false */
  fresh?: boolean;
  /** Extra `redis-server` arguments, e.g. `['--requirepass', 'secret']`. */
  args?: readonly string[];
  /** Serve TLS only on the port (plain port disabled). */
  tls?: RedisTlsFiles;
  /** Lines appended to an ACL file loaded at start, e.g. `user app on >pw ~* +@all`. */
  aclUsers?: readonly string[];
}

async function pingOk(
  host: string,
  port: number,
  tls?: ConnectionOptions,
  auth?: string[],
): Promise<boolean> {
  const command = auth ? respCommand('AUTH', ...auth) + respCommand('PING') : respCommand('PING');
  const answer = await rawCommand(host, port, command, tls ? { tls } : {});
  // Any answer means the server is up; -NOAUTH / -WRONGPASS still prove it is listening.
  return answer.startsWith('+') || answer.startsWith('-');
}

function redisFromUrl(url: string): RedisServer {
  const parsed = new URL(url);
  return {
    host: parsed.hostname,
    port: Number(parsed.port || 6379),
    url,
    owned: false,
    stop: async () => {},
    restart: async () => {},
  };
}

/**
 * A Redis server for one test file: REDIS_URL when set (unless `fresh` or special settings are
 * asked for), otherwise a throw-away `redis-server` that keeps nothing on disk, behind a front.
 */
export async function startRedis(options: StartRedisOptions = {}): Promise<RedisServer> {
  const special = options.fresh || options.args || options.tls || options.aclUsers;
  const fromEnv = process.env.REDIS_URL;
  if (fromEnv && !special) return redisFromUrl(fromEnv);

  const binary = requireBinary('redis-server', DEBIAN_PACKAGE);
  const dir = mkdtempSync(join(tmpdir(), 'testkit-redis-'));
  const common = ['--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir];
  if (options.tls) {
    common.push('--tls-cert-file', options.tls.certFile, '--tls-key-file', options.tls.keyFile);
    common.push('--tls-ca-cert-file', options.tls.caFile);
    common.push('--tls-auth-clients', options.tls.authClients ? 'yes' : 'no');
  }
  if (options.aclUsers) {
    const aclFile = join(dir, 'users.acl');
    writeFileSync(aclFile, `${options.aclUsers.join('\n')}\n`);
    common.push('--aclfile', aclFile);
  }
  // The probe presents the server's own certificate as a client certificate, so a server that
  // requires client certificates (`authClients`) still answers it.
  const tls: ConnectionOptions | undefined = options.tls
    ? {
        rejectUnauthorized: false,
        ...(options.tls.authClients
          ? { cert: readFileSync(options.tls.certFile), key: readFileSync(options.tls.keyFile) }
          : {}),
      }
    : undefined;

  // Clients use the front's port; the server's own port changes at each restart (see fronted.ts).
  const server = await startFronted(async (port) => {
    const listen = options.tls ? ['--port', '0', '--tls-port', String(port)] : ['--port', String(port)];
    const proc = spawnManaged({
      name: `redis-server:${port}`,
      command: binary,
      args: [...common, ...listen, ...(options.args ?? [])],
    });
    await waitUntilReady(proc, () => pingOk('127.0.0.1', port, tls));
    return proc;
  });
  return {
    host: '127.0.0.1',
    port: server.port,
    url: `${options.tls ? 'rediss' : 'redis'}://127.0.0.1:${server.port}`,
    owned: true,
    stop: () => server.stop(),
    restart: () => server.restart(),
  };
}

export interface RedisCluster {
  readonly nodes: readonly { host: string; port: number }[];
  /** `host:port,host:port,...` of every node. */
  readonly hostPorts: string;
  /** Stops one master (for failure tests); `restartNode` brings it back with its cluster state. */
  stopNode(index: number): Promise<void>;
  restartNode(index: number): Promise<void>;
  stop(): Promise<void>;
}

async function clusterStateOk(port: number): Promise<boolean> {
  const answer = await rawCommand('127.0.0.1', port, respCommand('CLUSTER', 'INFO'));
  return answer.includes('cluster_state:ok');
}

async function waitFor(check: () => Promise<boolean>, what: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    try {
      if (await check()) return;
    } catch {
      // not yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/**
 * A Redis Cluster of `masters` (default 3) masters and no replicas, built with `redis-cli --cluster
 * create`. Each node is behind a front (see fronted.ts) and announces the front's port to clients
 * (`cluster-announce-port`), so a restarted node keeps its address while it listens on a new port.
 * Its bus port changes too (announced with `cluster-announce-bus-port`): the restarted node knows
 * its peers from its nodes file, pings them, and they learn its new bus address from that ping.
 */
export async function startRedisCluster(masters = 3): Promise<RedisCluster> {
  const binary = requireBinary('redis-server', DEBIAN_PACKAGE);
  const cli = requireBinary('redis-cli', 'redis-tools');
  const dir = mkdtempSync(join(tmpdir(), 'testkit-redis-cluster-'));
  const launchNode =
    (index: number): Launch =>
    async (port, frontPort) => {
      const busPort = await freePort(); // a clash here fails the start and is retried too
      const proc = spawnManaged({
        name: `redis-cluster-node:${frontPort}`,
        command: binary,
        args: [
          ...['--bind', '127.0.0.1', '--port', String(port), '--cluster-port', String(busPort)],
          ...['--save', '', '--appendonly', 'no', '--dir', dir],
          ...['--cluster-enabled', 'yes', '--cluster-config-file', `nodes-${index}.conf`],
          ...['--cluster-node-timeout', '2000', '--cluster-announce-ip', '127.0.0.1'],
          ...['--cluster-announce-port', String(frontPort)],
          ...['--cluster-announce-bus-port', String(busPort)],
        ],
      });
      await waitUntilReady(proc, () => pingOk('127.0.0.1', port));
      return proc;
    };
  const nodes: FrontedServer[] = [];
  const closeAll = async (): Promise<void> => {
    await Promise.all(nodes.map((n) => n.close()));
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    for (let i = 0; i < masters; i++) nodes.push(await startFronted(launchNode(i)));
    const create = spawnManaged({
      name: 'redis-cli --cluster create',
      command: cli,
      args: [
        '--cluster',
        'create',
        ...nodes.map((n) => `127.0.0.1:${n.port}`),
        '--cluster-replicas',
        '0',
        '--cluster-yes',
      ],
    });
    await waitFor(async () => !create.isRunning(), 'redis-cli --cluster create');
    await waitFor(
      async () => (await Promise.all(nodes.map((n) => clusterStateOk(n.port)))).every(Boolean),
      `cluster_state:ok on ports ${nodes.map((n) => n.port).join(',')}`,
    ).catch((error: Error) => {
      throw new Error(`${error.message}\n${create.output()}`);
    });
  } catch (error) {
    await closeAll();
    throw error;
  }
  const node = (index: number): FrontedServer => {
    const found = nodes[index];
    if (!found) throw new Error(`the cluster has no node ${index}`);
    return found;
  };
  return {
    nodes: nodes.map((n) => ({ host: '127.0.0.1', port: n.port })),
    hostPorts: nodes.map((n) => `127.0.0.1:${n.port}`).join(','),
    stopNode: (index) => node(index).stop(),
    async restartNode(index) {
      await node(index).restart();
      // Every node, not only the restarted one, must see the cluster whole again.
      await waitFor(
        async () => (await Promise.all(nodes.map((n) => clusterStateOk(n.port)))).every(Boolean),
        `node ${node(index).port} to rejoin`,
      );
    },
    stop: closeAll,
  };
}

export interface RedisSentinelSetup {
  readonly masterName: string;
  readonly master: RedisServer;
  readonly sentinels: readonly { host: string; port: number }[];
  /** The sentinel setting of the rate limiter: `masterName,host:port,host:port`. */
  readonly sentinelUrl: string;
  stop(): Promise<void>;
}

/** One master and `count` (default 2) sentinels monitoring it under `masterName` (default `mymaster`). */
export async function startRedisSentinel(count = 2, masterName = 'mymaster'): Promise<RedisSentinelSetup> {
  const binary = requireBinary('redis-server', 'redis-server redis-sentinel');
  const master = await startRedis({ fresh: true });
  const dir = mkdtempSync(join(tmpdir(), 'testkit-sentinel-'));
  const sentinels: { host: string; port: number; proc: ManagedProcess }[] = [];
  const launchSentinel: Launch = async (port) => {
    const conf = join(dir, `sentinel-${port}.conf`);
    writeFileSync(
      conf,
      [
        `port ${port}`,
        'bind 127.0.0.1',
        `dir ${dir}`,
        `sentinel monitor ${masterName} 127.0.0.1 ${master.port} 1`,
        `sentinel down-after-milliseconds ${masterName} 2000`,
        `sentinel failover-timeout ${masterName} 10000`,
        '',
      ].join('\n'),
    );
    const proc = spawnManaged({
      name: `redis-sentinel:${port}`,
      command: binary,
      args: [conf, '--sentinel'],
    });
    await waitUntilReady(proc, async () => {
      const answer = await rawCommand(
        '127.0.0.1',
        port,
        respCommand('SENTINEL', 'get-master-addr-by-name', masterName),
      );
      return answer.includes(String(master.port));
    });
    return proc;
  };
  // Sentinels are never restarted: a probed port, tried again on a clash, is enough.
  for (let i = 0; i < count; i++) {
    const { port, proc } = await launchOnFreePort(launchSentinel);
    sentinels.push({ host: '127.0.0.1', port, proc });
  }
  return {
    masterName,
    master,
    sentinels: sentinels.map(({ host, port }) => ({ host, port })),
    sentinelUrl: [masterName, ...sentinels.map((s) => `${s.host}:${s.port}`)].join(','),
    async stop() {
      await Promise.all(sentinels.map((s) => s.proc.stop()));
      await master.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
