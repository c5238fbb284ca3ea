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
  portVariable?: string;
  port?: number;
  /** Path polled until it answers below 500, e.g. `/health`. */
  healthPath: string;
  timeoutMs?: number;
}

/** Starts a service as a real child process on a free port and waits for its health path. */
export async function startServiceProcess(options: StartServiceOptions): Promise<ServiceProcess> {
  const port = options.port ?? (await freePort());
  const url = `http://127.0.0.1:${port}`;
  const proc = spawnManaged({
    name: options.name,
    command: process.execPath,
    args: ['--import', 'tsx', options.entry],
    cwd: options.cwd,
    env: { ...options.env, [options.portVariable ?? 'PORT']: String(port) },
  });
  await waitUntilReady(
    proc,
    async () => {
      const response = await fetch(`${url}${options.healthPath}`, { signal: AbortSignal.timeout(1_000) });
      await response.arrayBuffer();
      return response.status < 500;
    },
    options.timeoutMs ?? 30_000,
  );
  return { ...proc, port, url };
}
