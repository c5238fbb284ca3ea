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
    // A call queued for a socket would end after two or three timeouts if the timeout covered only
    // the socket's own wait; 2 s leaves a loaded machine 2 s of slack before the bound of two.
    const timeoutMs = 2_000;
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

describe('upstream client credentials', () => {
  it('sends credentials of the endpoint URL as Basic auth, unless the call has its own Authorization', async () => {
    // A real upstream that answers with the Authorization header it received.
    const echo = http.createServer((request, response) => {
      request.resume();
      request.on('end', () => {
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end(JSON.stringify({ data: { authorization: request.headers.authorization ?? null } }));
      });
    });
    const running = await listenOnFreePort({
      listen: ({ port, host }) =>
        new Promise((resolve) =>
          echo.listen(port, host, () =>
            resolve(`http://${host}:${(echo.address() as { port: number }).port}`),
          ),
        ),
      close: () =>
        new Promise<void>((resolve) => {
          echo.closeAllConnections();
          echo.close(() => resolve());
        }),
    });
    const client = createUpstreamClient(running.url.replace('http://', 'http://user:p%40ss@'), 2000);
    try {
      const seen = async (authorization?: string) => {
        const outcome = await client.post({ body: '{"query":"{ a }"}', authorization });
        if (outcome.kind !== 'answered') throw new Error(outcome.reason);
        return (outcome.body.data as { authorization: string | null }).authorization;
      };
      expect(await seen()).toBe(`Basic ${Buffer.from('user:p@ss').toString('base64')}`);
      expect(await seen('Bearer own')).toBe('Bearer own');
    } finally {
      client.close();
      await running.close();
    }
  });
});
