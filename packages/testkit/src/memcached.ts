import { requireBinary } from './binaries.js';
import { freePort } from './ports.js';
import { type ManagedProcess, spawnManaged, waitUntilReady } from './process.js';
import { rawCommand } from './wire.js';

export interface MemcachedServer {
  readonly host: string;
  readonly port: number;
  /** `host:port`, the form MEMSTORE_HOST_PORT takes. */
  readonly hostPort: string;
  readonly owned: boolean;
  stop(): Promise<void>;
  restart(): Promise<void>;
}

async function versionOk(host: string, port: number): Promise<boolean> {
  return (await rawCommand(host, port, 'version\r\n')).startsWith('VERSION');
}

/**
 * A memcached for one test file: MEMCACHED_URL (`host:port` or `memcached://host:port`) when set
 * and `fresh` is not asked for, otherwise a throw-away `memcached` on a free port.
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
  const port = await freePort();
  let proc: ManagedProcess | undefined;
  const launch = async (): Promise<void> => {
    // -U 0 disables UDP; running as root needs -u.
    const args = [
      '-l',
      '127.0.0.1',
      '-p',
      String(port),
      '-U',
      '0',
      '-m',
      '64',
      '-u',
      'root',
      ...(options.args ?? []),
    ];
    proc = spawnManaged({ name: `memcached:${port}`, command: binary, args });
    const started = proc;
    await waitUntilReady(started, () => versionOk('127.0.0.1', port));
  };
  await launch();
  return {
    host: '127.0.0.1',
    port,
    hostPort: `127.0.0.1:${port}`,
    owned: true,
    async stop() {
      await proc?.stop();
    },
    async restart() {
      await proc?.stop();
      await launch();
    },
  };
}

/** `count` independent memcached servers (a client-side ring), always freshly started. */
export async function startMemcachedNodes(count: number): Promise<MemcachedServer[]> {
  return Promise.all(Array.from({ length: count }, () => startMemcached({ fresh: true })));
}
