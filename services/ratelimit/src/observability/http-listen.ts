import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A started HTTP listener (pull metrics, debug server). */
export interface RunningHttpServer {
  readonly port: number;
  readonly url: string;
  close(): Promise<void>;
}

export function listen(server: Server, port: number, host: string | undefined): Promise<RunningHttpServer> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      const address = server.address() as AddressInfo;
      const shownHost = host === undefined || host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host;
      resolve({
        port: address.port,
        url: `http://${shownHost.includes(':') ? `[${shownHost}]` : shownHost}:${address.port}`,
        close: () =>
          new Promise<void>((done) => {
            server.close(() => done());
            server.closeAllConnections();
          }),
      });
    });
  });
}
