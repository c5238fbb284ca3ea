import { Writable } from 'node:stream';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RenderedError, registerErrorHandlers } from '../src/framework-errors.js';

// How the one error handler logs each kind of failure: a bug as an error with its stack, a documented
// 503 (retry later) as a warning with its reason, a refusal briefly at info.

class Own extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
  ) {
    super(`${code} happened`);
  }
}

const lines: Record<string, unknown>[] = [];
let app: FastifyInstance;

beforeAll(async () => {
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString('utf8').split('\n')) if (line) lines.push(JSON.parse(line));
      done();
    },
  });
  app = Fastify({ logger: { level: 'info', stream } });
  registerErrorHandlers(app, {
    own: (error): RenderedError | undefined =>
      error instanceof Own
        ? { status: error.status, body: { error: error.code }, name: error.code, message: error.message }
        : undefined,
    edge: (error) => ({
      status: error.kind === 'internal' ? 500 : 400,
      body: { error: error.kind },
      name: error.kind,
      message: error.message,
    }),
  });
  app.get('/unavailable', async () => {
    throw new Own(503, 'unavailable');
  });
  app.get('/bug', async () => {
    throw new TypeError('a bug');
  });
  app.get('/refused', async () => {
    throw new Own(400, 'validation_failed');
  });
  await app.ready();
});
afterAll(() => app.close());

/** The handler's log line of the request to `url`, with the answer's status. */
async function logged(url: string): Promise<Record<string, unknown>> {
  lines.length = 0;
  const response = await app.inject({ url });
  const line = lines.find((l) => /^request (failed|refused)/.test(String(l.msg)));
  expect(line).toBeDefined();
  return { status: response.statusCode, ...line };
}

describe('the error handler’s log levels', () => {
  it('logs a documented 503 as a warning with its reason, no stack', async () => {
    const line = await logged('/unavailable');
    expect(line).toMatchObject({
      status: 503,
      level: 40,
      code: 'unavailable',
      msg: 'request refused: unavailable',
    });
    expect(line.err).toBeUndefined();
  });

  it('logs a failure of the code as an error with the error', async () => {
    const line = await logged('/bug');
    expect(line).toMatchObject({ status: 500, level: 50, msg: 'request failed' });
    expect(JSON.stringify(line.err)).toContain('a bug');
  });

  it('logs a refusal briefly at info', async () => {
    const line = await logged('/refused');
    expect(line).toMatchObject({ status: 400, level: 30, code: 'validation_failed', msg: 'request refused' });
  });
});
