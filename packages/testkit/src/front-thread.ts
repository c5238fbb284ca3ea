import { Worker } from 'node:worker_threads';

/**
 * A `TcpFront` (see front.ts) whose proxying runs on a worker thread of the test process. The port
 * is still held by the test process for the whole test, but the bytes do not compete with the test's
 * own event loop: an outage test runs the services under test and a request loop on the main thread,
 * and a front there added enough latency on a loaded machine to push calls past a 300 ms backend
 * timeout. `target()` resolves once the worker applies it, so a connection made after it goes to
 * the new target.
 */
export interface ThreadFront {
  readonly port: number;
  target(port: number | undefined): Promise<void>;
  close(): Promise<void>;
}

// Plain JavaScript (evaluated by the worker, which has no TypeScript loader). Same behaviour as
// startTcpFront: reset while there is no target; a refused upstream resets the client; open
// connections are cut when the target changes.
const WORKER = `
const { parentPort } = require('node:worker_threads');
const { connect, createServer } = require('node:net');
let targetPort;
const open = new Set();
const server = createServer((client) => {
  if (targetPort === undefined) { client.resetAndDestroy(); return; }
  const upstream = connect(targetPort, '127.0.0.1');
  for (const socket of [client, upstream]) { open.add(socket); socket.on('close', () => open.delete(socket)); }
  let answered = false;
  upstream.once('data', () => { answered = true; });
  upstream.on('error', () => {
    if (!answered) { client.resetAndDestroy(); return; }
    client.unpipe(upstream); client.on('data', () => {}); client.end();
  });
  client.on('error', () => upstream.destroy());
  client.pipe(upstream);
  upstream.pipe(client);
});
server.listen(0, '127.0.0.1', () => parentPort.postMessage({ kind: 'listening', port: server.address().port }));
parentPort.on('message', (message) => {
  if (message.kind === 'target') {
    targetPort = message.port === null ? undefined : message.port;
    for (const socket of open) socket.destroy();
    parentPort.postMessage({ kind: 'done', id: message.id });
  } else if (message.kind === 'close') {
    targetPort = undefined;
    for (const socket of open) socket.destroy();
    server.close(() => parentPort.postMessage({ kind: 'done', id: message.id }));
  }
});
`;

type FromWorker = { kind: 'listening'; port: number } | { kind: 'done'; id: number };

export async function startThreadFront(): Promise<ThreadFront> {
  const worker = new Worker(WORKER, { eval: true });
  const pending = new Map<number, () => void>();
  let nextId = 0;
  const port = await new Promise<number>((resolve, reject) => {
    worker.once('error', reject);
    worker.on('message', (message: FromWorker) => {
      if (message.kind === 'listening') resolve(message.port);
      else {
        pending.get(message.id)?.();
        pending.delete(message.id);
      }
    });
  });
  // A test that forgets to close the front must not keep its worker alive for it.
  worker.unref();
  const ask = (message: { kind: 'target'; port: number | null } | { kind: 'close' }): Promise<void> => {
    const id = nextId++;
    return new Promise<void>((resolve) => {
      pending.set(id, resolve);
      worker.postMessage({ ...message, id });
    });
  };
  return {
    port,
    target: (target) => ask({ kind: 'target', port: target ?? null }),
    async close() {
      await ask({ kind: 'close' });
      await worker.terminate();
    },
  };
}
