import http from 'node:http';
import { listenOnFreePort, type RunningApp } from '@platform/testkit/app';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUpstreamClient } from '../src/upstream/client.js';

// A real server that accepts requests and never answers.
let hanging: RunningApp;
const server = http.createServer(() => undefined);

beforeAll(async () => {
  hanging = await listenOnFreePort({
    listen: ({ port, host }) =>
      new Promise((resolve) =>
        server.listen(port, host, () =>
          resolve(`http://${host}:${(server.address() as { port: number }).port}`),
        ),
      ),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  });
});

afterAll(async () => {
  await hanging?.close();
});

describe('upstream client timeout', () => {
  it('covers the whole call, including the wait for a free socket', async () => {
    const timeoutMs = 400;
    const client = createUpstreamClient(`${hanging.url}/graphql`, timeoutMs);
    try {
      const started = Date.now();
      // More concurrent calls than the agent has sockets (64): the rest wait for a socket.
      const elapsed = await Promise.all(
        Array.from({ length: 130 }, async () => {
          const outcome = await client.post({ body: '{"query":"{ __typename }"}' });
          expect(outcome.kind).toBe('unavailable');
          return Date.now() - started;
        }),
      );
      expect(Math.max(...elapsed)).toBeLessThan(timeoutMs * 2);
    } finally {
      client.close();
    }
  });
});
