import { startThreadFront, type ThreadFront } from './front-thread.js';
import { freePort } from './ports.js';
import type { ManagedProcess } from './process.js';

/**
 * A server that tests stop and restart (Redis, memcached, a cluster node) behind a TCP front.
 *
 * Why a front: redis-server and memcached cannot bind port 0 and tell which port they got, and a
 * restart "on the same port" means releasing the port and binding it again, in which gap another
 * parallel test file may take it. Instead the stable address clients use is the front's listener,
 * which the test process holds open from start to `close()`: no other process can bind it at any
 * moment. The server itself listens on a private port that may change at every (re)start; a clash
 * on that port (someone took it between `freePort()` and the bind) is seen in the server's output
 * and the start is retried on another port, and nobody depends on that port but the front.
 *
 * What a client sees while the server is down: the front accepts and resets at once (an RST right
 * after the handshake) where a stopped server's port would refuse the connection (an RST instead of
 * the SYN-ACK). Both fail the connection attempt before any byte is exchanged; a client sees
 * ECONNRESET (or "connection closed") instead of ECONNREFUSED, and retries the same way. A truly
 * refusing listener would have to stop listening, and a port that is not listened on can be bound
 * by another process, which is the race this removes.
 */
export interface FrontedServer {
  /** The stable port (the front's). */
  readonly port: number;
  /** The server's own current port (changes across restarts); for readiness probes only. */
  realPort(): number;
  /** Stops the server; the front stays and resets new connections until `restart()`. */
  stop(): Promise<void>;
  /** Starts the server again (on a new private port) and points the front at it. */
  restart(): Promise<void>;
  /** Stops the server and releases the front's port. */
  close(): Promise<void>;
}

/**
 * `launch` starts the server on `port` and resolves once it answers (or rejects with its output).
 * `frontPort` is the stable port clients use, for servers that announce their address (cluster).
 */
export type Launch = (port: number, frontPort: number) => Promise<ManagedProcess>;

const CLASH = /address already in use/i;
const ATTEMPTS = 5;

/** Starts `launch` on a free private port, trying another port when the one probed was taken. */
export async function launchOnFreePort(
  launch: Launch,
  frontPort = 0,
): Promise<{ proc: ManagedProcess; port: number }> {
  let lastError: unknown;
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    const port = await freePort();
    try {
      return { proc: await launch(port, frontPort), port };
    } catch (error) {
      lastError = error;
      if (!(error instanceof Error && CLASH.test(error.message))) throw error;
    }
  }
  throw lastError;
}

export async function startFronted(launch: Launch): Promise<FrontedServer> {
  // On a worker thread, so the proxying does not slow the test's own event loop (see front-thread.ts).
  const front: ThreadFront = await startThreadFront();
  let current: { proc: ManagedProcess; port: number } | undefined;
  const start = async (): Promise<void> => {
    current = await launchOnFreePort(launch, front.port);
    await front.target(current.port);
  };
  const stop = async (): Promise<void> => {
    // The server first, as a stopped server would: it answers what it was already asked and closes
    // its connections (the front passes that on); connections made while it shuts down reach its
    // closed port and are reset by the front. Only then are new connections reset at the front.
    await current?.proc.stop();
    await front.target(undefined);
  };
  try {
    await start();
  } catch (error) {
    await front.close();
    throw error;
  }
  return {
    port: front.port,
    realPort: () => current?.port ?? 0,
    stop,
    async restart() {
      await stop();
      await start();
    },
    async close() {
      await stop();
      await front.close();
    },
  };
}
