import { requireBinary } from './binaries.js';
import { startFronted } from './fronted.js';
import { spawnManaged, waitUntilReady } from './process.js';
import { rawCommand } from './wire.js';

export interface MemcachedServer {
  readonly host: string;
  readonly port: number;
  /** `host:port`, the form MEMSTORE_HOST_PORT takes. */
  readonly hostPort: string;
  readonly owned: boolean;
  stop(): Promise<void>;
  /**
   * Starts it again, reachable at the same `port`. That port is a front held by the test process
   * (see fronted.ts): while memcached is down a connection to it is reset once accepted, not refused.
   */
  restart(): Promise<void>;
}

async function versionOk(host: string, port: number): Promise<boolean> {
  return (await rawCommand(host, port, 'version\r\n')).startsWith('VERSION');
}

/**
 * A memcached for one test file: MEMCACHED_URL (`host:port` or `memcached://host:port`) when set
 * and `fresh` is not asked for, otherwise a throw-away `memcached` behind a front.
 */
export async function startMemcached(
  options: { fresh?: boolean; args?: readonly string[] } = {},
): Promise<MemcachedServer> {
  const fromEnv = process.env.MEMCACHED_URL;
  if (fromEnv && !options.fresh && !options.args) {
    const parsed = new URL(fromEnv.includes('://') ? fromEnv : `memcached://${fromEnv}`);
    const port = Number(parsed.port || 11211);
    return {
      host: parsed.hostname,
      port,
      hostPort: `${parsed.hostname}:${port}`,
      owned: false,
      stop: async () => {},
      restart: async () => {},
    };
  }
  const binary = requireBinary('memcached', 'memcached');
  // Clients use the front's port; memcached's own port changes at each restart (see fronted.ts).
  const server = await startFronted(async (port) => {
    // -U 0 disables UDP; running as root needs -u.
    const args = ['-l', '127.0.0.1', '-p', String(port), '-U', '0', '-m', '64', '-u', 'root'];
    const proc = spawnManaged({
      name: `memcached:${port}`,
      command: binary,
      args: [...args, ...(options.args ?? [])],
    });
    await waitUntilReady(proc, () => versionOk('127.0.0.1', port));
    return proc;
  });
  return {
    host: '127.0.0.1',
    port: server.port,
    hostPort: `127.0.0.1:${server.port}`,
    owned: true,
    stop: () => server.stop(),
    restart: () => server.restart(),
  };
}

/** `count` independent memcached servers (a client-side ring), always freshly started. */
export async function startMemcachedNodes(count: number): Promise<MemcachedServer[]> {
  return Promise.all(Array.from({ length: count }, () => startMemcached({ fresh: true })));
}
