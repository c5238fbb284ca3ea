import { connect, createServer, type Socket } from 'node:net';

/**
 * A stable address, owned by the test process for the whole test, in front of a server that restarts
 * on a new port each time (bound to port 0). Clients keep one URL across restarts and no other process
 * can take the port meanwhile, unlike a port released by `freePort()` and bound again. While no target
 * is set (the server is down) a connection is reset at once, as a client of a stopped server sees.
 */
export interface TcpFront {
  readonly port: number;
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  /** Where connections go from now on; `undefined` resets them. Open connections are cut. */
  target(port: number | undefined): void;
  close(): Promise<void>;
}

export async function startTcpFront(): Promise<TcpFront> {
  let targetPort: number | undefined;
  const open = new Set<Socket>();
  const server = createServer((client) => {
    if (targetPort === undefined) {
      client.resetAndDestroy();
      return;
    }
    const upstream = connect(targetPort, '127.0.0.1');
    const pair = [client, upstream];
    for (const socket of pair) {
      open.add(socket);
      socket.on('close', () => open.delete(socket));
    }
    // A refused connection upstream resets the client's, as a refused connection would. Once the
    // server has answered, an error (it closed while the client was still sending, e.g. a 413 on a
    // large body) ends the client's connection gracefully: what was answered must reach the client,
    // and its remaining bytes are read and dropped so no reset overtakes the answer.
    let answered = false;
    upstream.once('data', () => {
      answered = true;
    });
    upstream.on('error', () => {
      if (!answered) {
        client.resetAndDestroy();
        return;
      }
      client.unpipe(upstream);
      client.on('data', () => {});
      client.end();
    });
    client.on('error', () => upstream.destroy());
    client.pipe(upstream);
    upstream.pipe(client);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('the front has no TCP address');
  return {
    port: address.port,
    url: `http://127.0.0.1:${address.port}`,
    target(port) {
      targetPort = port;
      for (const socket of open) socket.destroy();
    },
    close() {
      targetPort = undefined;
      for (const socket of open) socket.destroy();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
