import { describe, expect, it } from 'vitest';
import { startTcpFront } from '../src/front.js';
import { listeningPorts } from '../src/listening.js';
import { spawnManaged, waitUntilReady } from '../src/process.js';

// A server on port 0 that answers with its own port (so the test sees which instance answered).
const SERVER = `const s = require('node:http').createServer((q, r) => r.end(String(s.address().port)));
s.listen(0, '127.0.0.1');`;

async function startServer() {
  const proc = spawnManaged({ name: 'port-0', command: process.execPath, args: ['-e', SERVER] });
  let port = 0;
  await waitUntilReady(proc, async () => {
    [port = 0] = await listeningPorts(proc.pid ?? -1);
    return port > 0;
  });
  return { proc, port };
}

describe('a server bound to port 0 behind a TCP front', () => {
  it('is found by its listening socket and reached through one address across a restart', async () => {
    const front = await startTcpFront();
    try {
      const first = await startServer();
      expect(await listeningPorts(first.proc.pid ?? -1)).toEqual([first.port]);
      front.target(first.port);
      expect(await (await fetch(front.url)).text()).toBe(String(first.port));

      await first.proc.stop();
      front.target(undefined);
      await expect(fetch(front.url)).rejects.toThrow();

      const second = await startServer();
      front.target(second.port);
      expect(await (await fetch(front.url)).text()).toBe(String(second.port));
      await second.proc.stop();
    } finally {
      await front.close();
    }
  });

  it('resets a connection whose target refuses it', async () => {
    const front = await startTcpFront();
    // Port 1 (tcpmux) on loopback: nothing here listens there and no test binds a port below 1024,
    // unlike the port of a stopped server, which a test running in parallel may be given next.
    front.target(1);
    try {
      await expect(fetch(front.url)).rejects.toThrow();
    } finally {
      await front.close();
    }
  });
});
