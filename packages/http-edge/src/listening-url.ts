import type { Server } from 'node:net';

/**
 * `base` with the port `server` is listening on. A default public address derived from `HOST` and
 * `PORT` is wrong with `PORT=0` (the system picks the port at listen time): the exchange's mail
 * links and the gateway's form actions take the bound port from here once the server listens.
 */
export function withListeningPort(base: string, server: Pick<Server, 'address'>): string {
  const bound = server.address();
  if (bound === null || typeof bound !== 'object') return base;
  const url = new URL(base);
  url.port = String(bound.port);
  return url.origin;
}
