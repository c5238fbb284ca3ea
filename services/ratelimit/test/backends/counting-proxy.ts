import { createConnection, createServer, type Server } from 'node:net';
import type { RedisServer } from '@platform/testkit/redis';

/** A TCP proxy in front of Redis counting the chunks the client sends (one per round trip). */
export async function countingProxy(
  target: RedisServer,
): Promise<{ port: number; writes: () => number; bytesPerConnection: () => number[]; close(): void }> {
  let writes = 0;
  const bytes: number[] = [];
  const server: Server = createServer((client) => {
    const upstream = createConnection(target.port, target.host);
    const index = bytes.push(0) - 1;
    client.on('data', (chunk) => {
      writes += 1;
      bytes[index]! += chunk.length;
      upstream.write(chunk);
    });
    upstream.pipe(client);
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const address = server.address();
  return {
    port: typeof address === 'object' && address ? address.port : 0,
    writes: () => writes,
    bytesPerConnection: () => [...bytes],
    close: () => server.close(),
  };
}
