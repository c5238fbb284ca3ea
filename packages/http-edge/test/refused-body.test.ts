import { connect, type Socket } from 'node:net';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { drainRefusedBodies } from '../src/refused-body.js';

const LIMIT = 1024;
let app: FastifyInstance;
let port = 0;

beforeAll(async () => {
  app = Fastify({ bodyLimit: LIMIT });
  drainRefusedBodies(app, 64 * 1024);
  app.put('/x', async (request) => ({ got: JSON.stringify(request.body).length }));
  app.get('/ping', async () => ({ pong: true }));
  await app.listen({ host: '127.0.0.1', port: 0 });
  port = (app.server.address() as { port: number }).port;
});
afterAll(() => app.close());

/** Everything the server sends until it has sent `answers` complete responses or closes. */
function exchange(socket: Socket, data: string, answers: number): Promise<{ text: string; closed: boolean }> {
  return new Promise((resolve) => {
    let text = '';
    const done = (closed: boolean) => {
      socket.removeAllListeners('data');
      resolve({ text, closed });
    };
    socket.on('data', (chunk: Buffer) => {
      text += chunk.toString('latin1');
      if (text.split('HTTP/1.1 ').length - 1 >= answers && /\r\n\r\n[\s\S]*\}$/.test(text)) done(false);
    });
    socket.once('close', () => done(true));
    socket.write(data);
  });
}

function put(length: number, body = 'a'.repeat(length)): string {
  return `PUT /x HTTP/1.1\r\nhost: t\r\ncontent-type: application/json\r\ncontent-length: ${length}\r\n\r\n${body}`;
}

describe('drainRefusedBodies', () => {
  it('answers a body over the limit with 413, reads it to its end and keeps the connection', async () => {
    const socket = connect(port, '127.0.0.1');
    const ping = 'GET /ping HTTP/1.1\r\nhost: t\r\n\r\n';
    // the oversized body and a second request behind it, in one write: the second is answered only
    // if the server read the whole refused body and kept the connection
    const { text, closed } = await exchange(socket, put(20_000) + ping, 2);
    socket.destroy();
    expect(closed).toBe(false);
    expect(text).toMatch(/^HTTP\/1\.1 413 /);
    expect(text.toLowerCase()).not.toContain('connection: close');
    expect(text).toContain('{"pong":true}');
  });

  it('still cuts the connection of a declared body over the drain limit, after its 413', async () => {
    const socket = connect(port, '127.0.0.1');
    const { text, closed } = await exchange(socket, put(100_000, 'a'.repeat(2_000)), 2);
    socket.destroy();
    expect(text).toMatch(/^HTTP\/1\.1 413 /);
    expect(text.toLowerCase()).toContain('connection: close');
    expect(closed).toBe(true);
  });

  it('leaves answers other than 413 as they are, and bodies within the limit reach the route', async () => {
    const socket = connect(port, '127.0.0.1');
    const { text } = await exchange(socket, put(12, '{"a":"1234"}'), 1);
    socket.destroy();
    expect(text).toMatch(/^HTTP\/1\.1 200 /);
    expect(text).toContain('{"got":12}');
  });
});
