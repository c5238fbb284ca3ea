import { createServer } from 'node:net';

/**
 * Asks the kernel for a free TCP port on 127.0.0.1. The port is released before it is returned, so
 * another process may take it before the caller binds it. Prefer port 0 and learning the port
 * (`startServiceProcess({ port: 0 })`, `listeningPorts`), or `launchOnFreePort` (fronted.ts), which
 * retries on a clash, for servers that cannot bind port 0; never bind such a port a second time
 * (a restart): keep the address with a front (`startFronted`, `startTcpFront`) instead.
 */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      if (address === null || typeof address === 'string') {
        server.close();
        reject(new Error('could not read the address of a probe socket'));
        return;
      }
      const { port } = address;
      server.close(() => resolve(port));
    });
  });
}
