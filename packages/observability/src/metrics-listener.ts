import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';
import type { MetricsSettings } from './settings.js';

export interface MetricsListener {
  /** `http://host:port/metrics` with the bound port; undefined when `METRICS_PORT=off`. */
  readonly url: string | undefined;
  readonly port: number | undefined;
  close(): Promise<void>;
}

/**
 * Why the metrics listener could not listen, naming the setting to change (issue 41: a second
 * service of one kind on a machine failed with `listen EADDRINUSE 127.0.0.1:9501`, which says neither
 * which listener nor what to do). Other errors are passed on as they are.
 */
export class MetricsListenError extends Error {
  override readonly name = 'MetricsListenError';
  constructor(
    message: string,
    /** The system's code: `EADDRINUSE`, `EACCES`, `EADDRNOTAVAIL`. */
    readonly code: string,
  ) {
    super(message);
  }
}

function listenFailure(error: NodeJS.ErrnoException, settings: MetricsSettings): Error {
  const { host, port } = settings;
  switch (error.code) {
    case 'EADDRINUSE':
      return new MetricsListenError(
        `METRICS_PORT ${port} is in use: set METRICS_PORT or METRICS_PORT=0`,
        error.code,
      );
    case 'EACCES':
      return new MetricsListenError(
        `METRICS_PORT ${port} may not be bound by this user: set METRICS_PORT (above 1023) or METRICS_PORT=0`,
        error.code,
      );
    case 'EADDRNOTAVAIL':
      return new MetricsListenError(
        `METRICS_HOST ${host} is not an address of this machine: set METRICS_HOST`,
        error.code,
      );
    default:
      return error;
  }
}

/**
 * The metrics listener, separate from the public one: `GET /metrics` answers the registry in the
 * Prometheus text format; anything else is 404. Binding `METRICS_HOST` (loopback by default) keeps
 * the numbers away from the public. A port in use (another instance of the service with the same
 * default) rejects with a `MetricsListenError` naming `METRICS_PORT`, which the service's start
 * prints (`<service>: could not start: METRICS_PORT 9501 is in use: ...`).
 */
export async function startMetricsListener(
  registry: Registry,
  settings: MetricsSettings,
  log?: { info(object: object, message: string): void },
): Promise<MetricsListener> {
  if (settings.port === 'off') {
    return { url: undefined, port: undefined, close: async () => {} };
  }
  const wanted = settings.port;
  const server: Server = createServer((request, response) => {
    const path = (request.url ?? '/').split('?')[0];
    if (path !== '/metrics' || (request.method !== 'GET' && request.method !== 'HEAD')) {
      response.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('not found\n');
      return;
    }
    registry.metrics().then(
      (text) => {
        response.setHeader('content-type', String(registry.contentType));
        response.writeHead(200);
        response.end(request.method === 'HEAD' ? undefined : text);
      },
      (error: unknown) => {
        response.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' });
        response.end(
          `metrics collection failed: ${error instanceof Error ? error.message : String(error)}\n`,
        );
      },
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) => reject(listenFailure(error, settings)));
    server.listen(wanted, settings.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const host = settings.host.includes(':') ? `[${settings.host}]` : settings.host;
  const url = `http://${host}:${port}/metrics`;
  log?.info({ metrics: url }, `metrics on ${url}`);
  return {
    url,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
