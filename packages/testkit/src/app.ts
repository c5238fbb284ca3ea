import { listeningPorts } from './listening.js';
import { freePort } from './ports.js';
import { type ManagedProcess, spawnManaged, waitUntilReady } from './process.js';

/** The part of a Fastify instance (or any server) the helpers need. */
export interface Listenable {
  listen(options: { port: number; host: string }): Promise<string>;
  close(): Promise<unknown>;
}

export interface RunningApp {
  /** Base URL without a trailing slash, e.g. `http://127.0.0.1:41234`. */
  readonly url: string;
  readonly port: number;
  close(): Promise<void>;
}

/** Listens on a free port of 127.0.0.1 and returns the base URL; `close()` stops it. */
export async function listenOnFreePort(app: Listenable): Promise<RunningApp> {
  const address = await app.listen({ port: 0, host: '127.0.0.1' });
  const port = Number(new URL(address).port);
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    async close() {
      await app.close();
    },
  };
}

export interface ServiceProcess extends ManagedProcess {
  readonly port: number;
  readonly url: string;
}

export interface StartServiceOptions {
  name: string;
  /** The entry file, run with `node --import tsx`. */
  entry: string;
  cwd?: string;
  /** Environment for the process; `portVariable` is set to a free port unless `port` is given. */
  env?: NodeJS.ProcessEnv;
  /**
   * A test deployment that means the services' documented sandbox secrets (the gateway's sandbox
   * merchant secret, the exchange's matching one, development tokens): sets `ALLOW_SANDBOX_SECRETS=true`,
   * without which issue 28's rule refuses them outside loopback or on PostgreSQL (`DATABASE_URL`).
   * @default false: the process gets the rule as operators do
   */
  sandboxSecrets?: boolean;
  portVariable?: string;
  /**
   * The port to give the process. `0` lets it bind a port of the kernel's choosing, learnt from the
   * process's listening sockets (the one answering `healthPath` with 2xx): nothing can take it from the
   * process, unlike a port probed by `freePort()` and released before the process binds it. Put a
   * `TcpFront` before it when clients need one address across restarts.
   */
  port?: number;
  /** Path polled until it answers below 500, e.g. `/health`. */
  healthPath: string;
  /** How long to wait for health. @default 60_000 */
  timeoutMs?: number;
  /** Receives everything the process prints (both streams). */
  onOutput?: (text: string) => void;
}

/** Starts a service as a real child process (see `port`) and waits for its health path. */
export async function startServiceProcess(options: StartServiceOptions): Promise<ServiceProcess> {
  const given = options.port ?? (await freePort());
  const proc = spawnManaged({
    name: options.name,
    command: process.execPath,
    args: ['--import', 'tsx', options.entry],
    cwd: options.cwd,
    // A service's metrics listener gets a free port too (a fixed default would collide between
    // parallel test files); a test that needs it reads the port from the start log line.
    env: {
      METRICS_PORT: '0',
      ...(options.sandboxSecrets ? { ALLOW_SANDBOX_SECRETS: 'true' } : {}),
      ...options.env,
      [options.portVariable ?? 'PORT']: String(given),
    },
    ...(options.onOutput ? { onOutput: options.onOutput } : {}),
  });
  // A given port is ready once it answers below 500. Found ports must answer 2xx: a process may
  // listen on more than one (the exchange's operator endpoint answers 403 to everything).
  const healthy = async (port: number): Promise<boolean> => {
    const response = await fetch(`http://127.0.0.1:${port}${options.healthPath}`, {
      signal: AbortSignal.timeout(1_000),
    });
    await response.arrayBuffer();
    return given === 0 ? response.ok : response.status < 500;
  };
  let port = given;
  await waitUntilReady(
    proc,
    async () => {
      if (given !== 0) return healthy(given);
      if (proc.pid === undefined) return false;
      for (const candidate of await listeningPorts(proc.pid)) {
        if (await healthy(candidate).catch(() => false)) {
          port = candidate;
          return true;
        }
      }
      return false;
    },
    // 60 s: an exchange starting under tsx on a loaded 2-core machine took over 30 s (helpers' runs at
    // load 18); a healthy start is unaffected, a broken one is reported a little later.
    options.timeoutMs ?? 60_000,
  );
  return { ...proc, port, url: `http://127.0.0.1:${port}` };
}
