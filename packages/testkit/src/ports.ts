import { createServer } from 'node:net';

/**
 * Asks the kernel for a free TCP port on 127.0.0.1. The port is released before it is returned, so a
 * race with another process is possible but rare; servers started by the testkit retry on a clash.
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
