/**
 * Malformed `after`/`before` cursors on `GET /events` are 400s in the service's error shape with the
 * request id, like every other validation error: never a 500, never a silently ignored cursor.
 * PGlite over a real listener.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeCursor } from '../src/domain/pagination.js';
import { call, hmacToken, newId, openPgliteStore, startApp, type TestApp, validBody } from './helpers.js';

let app: TestApp;
/** A cursor the service itself handed out. */
let good: string;

beforeAll(async () => {
  app = await startApp({ store: await openPgliteStore() });
  const alice = await hmacToken('alice');
  for (let i = 0; i < 3; i++) {
    await call(app, `/events/${newId()}`, { method: 'PUT', token: alice, body: validBody });
  }
  const link = (await call(app, '/events?limit=1')).headers.get('link') ?? '';
  good = /after=([A-Za-z0-9_-]+)>; rel="next"/.exec(link)?.[1] ?? '';
});
afterAll(async () => {
  await app.close();
  await app.store.close();
});

const base64url = (text: string) => Buffer.from(text).toString('base64url');
const FORMAT = 'must be a cursor taken from a Link header of GET /events';

describe('GET /events with a malformed cursor', () => {
  it.each([
    ['bad base64 (characters)', 'abc$def'],
    ['bad base64 (standard alphabet)', `${base64url('1:a')}+/`],
    ['bad base64 (impossible length)', 'AAAAA'],
    ['wrong shape (no separator)', base64url('1777653000000000')],
    ['wrong shape (JSON)', base64url('{"at":"2026-05-01T00:00:00Z","id":"a"}')],
    ['wrong shape (event id)', base64url('1:a/b')],
    ['bad date (not a number)', base64url('2026-05-01T00:00:00Z:a')],
    ['bad date (out of range)', base64url('999999999999999999:a')],
    ['empty', ''],
  ])('%s -> 400 naming the parameter', async (_name, cursor) => {
    for (const name of ['after', 'before']) {
      const { status, json, headers } = await call(app, `/events?${name}=${cursor}`, {
        headers: { 'x-request-id': 'cursor-check-1' },
      });
      expect(status).toBe(400);
      expect(json).toEqual({ statusCode: 400, message: [`${name} ${FORMAT}`], error: 'Bad Request' });
      expect(headers.get('x-request-id')).toBe('cursor-check-1');
    }
  });

  it('over-long -> 400 with the length rule (and no decoding of it)', async () => {
    const { status, json } = await call(app, `/events?after=${'A'.repeat(129)}`);
    expect(status).toBe(400);
    expect(json).toEqual({
      statusCode: 400,
      message: expect.arrayContaining(['after must be at most 128 characters']),
      error: 'Bad Request',
    });
  });

  it('after and before together -> 400, even when both are well-formed', async () => {
    expect(good).toMatch(/^[A-Za-z0-9_-]+$/);
    const { status, json } = await call(app, `/events?after=${good}&before=${good}`);
    expect(status).toBe(400);
    expect(json).toEqual({
      statusCode: 400,
      message: ['after and before must not be sent together'],
      error: 'Bad Request',
    });
  });

  it('is reported with the other problems of the query', async () => {
    const { status, json } = await call(app, `/events?limit=0&before=${base64url('x')}`);
    expect(status).toBe(400);
    expect((json as { message: string[] }).message).toEqual(
      expect.arrayContaining(['limit must not be less than 1', `before ${FORMAT}`]),
    );
  });

  it('as problem details when asked, with the request id', async () => {
    const { status, json, headers } = await call(app, `/events?after=${base64url('nope')}`, {
      headers: { accept: 'application/problem+json', 'x-request-id': 'cursor-check-2' },
    });
    expect(status).toBe(400);
    expect(headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(json).toMatchObject({ status: 400, requestId: 'cursor-check-2', errors: [`after ${FORMAT}`] });
  });

  it('a well-formed cursor naming no stored event is not an error: the page starts at its place', async () => {
    const early = encodeCursor({ atMicros: -1n, eventId: 'never-stored' });
    const { status, json, headers } = await call(app, `/events?after=${early}`);
    expect(status).toBe(200);
    expect((json as unknown[]).length).toBe(Number(headers.get('x-total-count')));
  });
});
