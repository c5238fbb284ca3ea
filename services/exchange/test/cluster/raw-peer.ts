import http2 from 'node:http2';
import type { AddressInfo } from 'node:net';

/**
 * A bare HTTP/2 server on a free port of 127.0.0.1 standing where an owner's internal listener would
 * (a peer that does what a test needs: dies, refuses, rewrites): `onStream` gets each stream; the
 * server and its sessions are destroyed by the function pushed to `cleanups`. Returns its URL.
 */
export async function rawPeer(
  onStream: (stream: http2.ServerHttp2Stream) => void,
  cleanups: (() => Promise<void> | void)[],
): Promise<string> {
  const server = http2.createServer();
  const sessions = new Set<http2.ServerHttp2Session>();
  server.on('session', (session) => sessions.add(session));
  server.on('stream', (stream) => {
    stream.on('error', () => {});
    onStream(stream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(
    () =>
      new Promise<void>((resolve) => {
        for (const session of sessions) session.destroy();
        server.close(() => resolve());
      }),
  );
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}
