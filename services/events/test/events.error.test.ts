/**
 * Bad input gets a clear error in the `{statusCode, message, error}` shape and changes nothing.
 * Runs on PGlite (the embedded default) over a real listener.
 */
import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EventView } from '../src/domain/event.js';
import { call, hmacToken, newId, openPgliteStore, startApp, type TestApp, validBody } from './helpers.js';

let app: TestApp;
let alice: string;
let existingId: string;
let existingBefore: string;

beforeAll(async () => {
  app = await startApp({ store: await openPgliteStore(), bodyLimitBytes: 256 * 1024 });
  alice = await hmacToken('alice');
  existingId = newId('existing');
  await call(app, `/events/${existingId}`, { method: 'PUT', token: alice, body: validBody });
  existingBefore = (await call(app, `/events/${existingId}`)).text;
});
afterAll(async () => {
  await app.close();
  await app.store.close();
});

/** A request sent with its path exactly as given (node:http does not normalise dot segments). */
function rawRequest(method: string, path: string, body?: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { authorization: `Bearer ${alice}` };
    if (body !== undefined) headers['content-type'] = 'application/json';
    const { hostname, port } = new URL(app.url);
    const request = httpRequest({ host: hostname, port, path, method, headers }, (response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => {
        text += chunk;
      });
      response.on('end', () => resolve({ status: response.statusCode ?? 0, text }));
    });
    request.on('error', reject);
    request.end(body);
  });
}

function expectErrorShape(json: unknown, statusCode: number, error: string): void {
  expect(json).toEqual({ statusCode, message: expect.anything(), error });
  const message = (json as { message: unknown }).message;
  expect(typeof message === 'string' || Array.isArray(message)).toBe(true);
}

interface BadPut {
  name: string;
  status: number;
  error: string;
  /** A fragment every message of the answer must include (validation messages are an array). */
  says: string;
  body?: unknown;
  rawBody?: string;
  contentType?: string;
}

const { cover: _cover, ...noCover } = validBody;
const badPuts: BadPut[] = [
  { name: 'invalid JSON', status: 400, error: 'Bad Request', says: 'not valid JSON', rawBody: '{"name": ' },
  { name: 'empty JSON body', status: 400, error: 'Bad Request', says: 'empty', rawBody: '' },
  {
    name: 'wrong content type',
    status: 415,
    error: 'Unsupported Media Type',
    says: 'application/json',
    rawBody: JSON.stringify(validBody),
    contentType: 'text/plain',
  },
  {
    name: 'form content type',
    status: 415,
    error: 'Unsupported Media Type',
    says: 'application/json',
    rawBody: 'name=x',
    contentType: 'application/x-www-form-urlencoded',
  },
  { name: 'a JSON array', status: 400, error: 'Bad Request', says: 'JSON object', body: [validBody] },
  {
    name: 'unknown field',
    status: 400,
    error: 'Bad Request',
    says: 'color',
    body: { ...validBody, color: 'red' },
  },
  {
    name: 'client-set createdBy',
    status: 400,
    error: 'Bad Request',
    says: 'createdBy is set by the server',
    body: { ...validBody, createdBy: 'mallory' },
  },
  {
    name: 'client-set createdAt',
    status: 400,
    error: 'Bad Request',
    says: 'createdAt is set by the server',
    body: { ...validBody, createdAt: '2020-01-01T00:00:00Z' },
  },
  {
    name: 'client-set eventId',
    status: 400,
    error: 'Bad Request',
    says: 'eventId is set by the server',
    body: { ...validBody, eventId: 'other' },
  },
  {
    name: 'javascript: cover',
    status: 400,
    error: 'Bad Request',
    says: 'http(s) URL',
    body: { ...validBody, cover: 'javascript:alert(1)' },
  },
  {
    name: 'ftp cover',
    status: 400,
    error: 'Bad Request',
    says: 'http(s) URL',
    body: { ...validBody, cover: 'ftp://x/y' },
  },
  {
    name: 'relative cover',
    status: 400,
    error: 'Bad Request',
    says: 'http(s) URL',
    body: { ...validBody, cover: '/c.png' },
  },
  {
    name: 'date only',
    status: 400,
    error: 'Bad Request',
    says: 'ISO 8601',
    body: { ...validBody, date: '2026-05-01' },
  },
  {
    name: 'date without zone',
    status: 400,
    error: 'Bad Request',
    says: 'ISO 8601',
    body: { ...validBody, date: '2026-05-01T18:30:00' },
  },
  {
    name: 'impossible date',
    status: 400,
    error: 'Bad Request',
    says: 'ISO 8601',
    body: { ...validBody, date: '2026-02-30T10:00:00Z' },
  },
  {
    name: 'year 0000 (no timestamptz holds it)',
    status: 400,
    error: 'Bad Request',
    says: 'ISO 8601',
    body: { ...validBody, date: '0000-06-01T10:00:00Z' },
  },
  {
    name: 'zone offset beyond 15:59',
    status: 400,
    error: 'Bad Request',
    says: 'ISO 8601',
    body: { ...validBody, date: '2026-06-01T10:00:00+16:00' },
  },
  {
    name: 'date as text',
    status: 400,
    error: 'Bad Request',
    says: 'ISO 8601',
    body: { ...validBody, date: 'tomorrow' },
  },
  {
    name: 'name too long',
    status: 400,
    error: 'Bad Request',
    says: 'at most 200',
    body: { ...validBody, name: 'x'.repeat(201) },
  },
  {
    name: 'empty name',
    status: 400,
    error: 'Bad Request',
    says: 'name should not be empty',
    body: { ...validBody, name: '' },
  },
  {
    name: 'body too long',
    status: 400,
    error: 'Bad Request',
    says: 'at most 100000',
    body: { ...validBody, body: 'x'.repeat(100_001) },
  },
  {
    name: 'missing name',
    status: 400,
    error: 'Bad Request',
    says: 'name is required',
    body: { ...noCover, name: undefined },
  },
  {
    name: 'name not a string',
    status: 400,
    error: 'Bad Request',
    says: 'name must be a string',
    body: { ...validBody, name: 42 },
  },
  {
    name: 'unknown access',
    status: 400,
    error: 'Bad Request',
    says: 'PUBLIC, PRIVATE',
    body: { ...validBody, access: 'SECRET' },
  },
  {
    name: 'request over the size limit',
    status: 413,
    error: 'Payload Too Large',
    says: 'limit',
    body: { ...validBody, body: 'x'.repeat(300 * 1024) },
  },
  {
    name: 'prototype poisoning',
    status: 400,
    error: 'Bad Request',
    says: '',
    rawBody: `{"name":"n","body":"b","date":"2026-05-01T18:30:00Z","__proto__":{"admin":true}}`,
  },
  // PostgreSQL cannot store U+0000: the write was a 500.
  {
    name: 'a NUL character in the name',
    status: 400,
    error: 'Bad Request',
    says: 'name must not contain a NUL character',
    body: { ...validBody, name: 'a\u0000b' },
  },
  // UTF-8 cannot carry a lone surrogate: it was stored as U+FFFD, another text than the one sent.
  {
    name: 'an unpaired surrogate in the body',
    status: 400,
    error: 'Bad Request',
    says: 'body must be valid Unicode text',
    rawBody: `{"name":"n","body":"b\\ud800","date":"2026-05-01T18:30:00Z"}`,
  },
];

describe('PUT with bad input changes nothing', () => {
  it.each(badPuts)('$name -> $status', async (bad) => {
    const { status, json } = await call(app, `/events/${existingId}`, {
      method: 'PUT',
      token: alice,
      body: bad.body,
      rawBody: bad.rawBody,
      contentType: bad.contentType,
    });
    expect(status).toBe(bad.status);
    expectErrorShape(json, bad.status, bad.error);
    const message = (json as { message: string | string[] }).message;
    expect(Array.isArray(message) ? message.join(' | ') : message).toContain(bad.says);
    expect((await call(app, `/events/${existingId}`)).text).toBe(existingBefore);
  });

  it('lists every validation problem at once, as an array', async () => {
    const { json } = await call(app, `/events/${newId()}`, {
      method: 'PUT',
      token: alice,
      body: { name: '', cover: 'nope', createdBy: 'x' },
    });
    expect((json as { message: string[] }).message).toEqual(
      expect.arrayContaining([
        'name should not be empty',
        'body is required',
        'date is required',
        'createdBy is set by the server and must not be sent',
        'cover must be an absolute http(s) URL',
      ]),
    );
  });

  it('a bad body on a new id creates nothing', async () => {
    const id = newId();
    await call(app, `/events/${id}`, { method: 'PUT', token: alice, body: { ...validBody, extra: 1 } });
    expect((await call(app, `/events/${id}`)).status).toBe(404);
  });
});

describe('eventId rules', () => {
  it.each([
    ['a space', 'a%20b'],
    ['a slash-like character', 'a%2Fb'],
    ['non-ASCII', '%C3%A9v'],
    ['65 characters', 'x'.repeat(65)],
  ])('%s is a 400 naming the rule', async (_label, raw) => {
    const { status, json } = await call(app, `/events/${raw}`, {
      method: 'PUT',
      token: alice,
      body: validBody,
    });
    expect(status).toBe(400);
    expect((json as { message: string[] }).message[0]).toContain('eventId must be 1-64 characters');
  });

  it.each(['.', '..'])('the dot segment "%s" sent raw (not normalised by a client) is a 400', async (id) => {
    // fetch and URL resolve dot segments before sending; a raw HTTP request line does not.
    const put = await rawRequest('PUT', `/events/${id}`, JSON.stringify(validBody));
    expect(put.status).toBe(400);
    expect((JSON.parse(put.text) as { message: string[] }).message[0]).toContain(
      'eventId must be 1-64 characters',
    );
    expect((await rawRequest('GET', `/events/${id}`)).status).toBe(400);
  });

  it('accepts the documented alphabet up to 64 characters', async () => {
    const id = `A-z_0.9~${'x'.repeat(56)}`;
    const { status } = await call(app, `/events/${id}`, { method: 'PUT', token: alice, body: validBody });
    expect(status).toBe(201);
  });
});

describe('GET /events query errors', () => {
  it.each([
    ['limit=0', 'limit must not be less than 1'],
    ['limit=101', 'limit must not be greater than 100'],
    ['limit=ten', 'limit must be an integer'],
    ['limit=1.5', 'limit must be an integer'],
    ['page=0', 'page must not be less than 1'],
    ['page=x', 'page must be an integer'],
  ])('%s -> 400 "%s"', async (query, message) => {
    const { status, json } = await call(app, `/events?${query}`);
    expect(status).toBe(400);
    expect(json).toEqual({ statusCode: 400, message: [message], error: 'Bad Request' });
  });

  it('a page past the end is an empty array with the total', async () => {
    const { status, json, headers } = await call(app, '/events?page=999&limit=100');
    expect(status).toBe(200);
    expect(json).toEqual([]);
    expect(Number(headers.get('x-total-count'))).toBeGreaterThan(0);
  });
});

describe('unknown routes', () => {
  it('answer 404 in the error shape; another method on a known path 405 with allow', async () => {
    const { status, json } = await call(app, '/nope');
    expect(status).toBe(404);
    expect(json).toEqual({ statusCode: 404, message: 'Cannot GET /nope', error: 'Not Found' });
    // A known path with another method is 405 with `allow` (issue 31), not 404.
    const post = await call(app, '/events', { method: 'POST', body: validBody });
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toContain('GET');
  });

  it('an event read back is unchanged by all of the above', async () => {
    expect(((await call(app, `/events/${existingId}`)).json as EventView).name).toBe(validBody.name);
  });
});

describe('failures of the database', () => {
  it('are a 500 without internals, and /health says 503', async () => {
    const broken = await startApp({ store: await openPgliteStore() });
    try {
      await broken.store.close();
      const { status, json, text } = await call(broken, `/events/${newId()}`);
      expect(status).toBe(500);
      expect(json).toEqual({
        statusCode: 500,
        message: 'Internal server error',
        error: 'Internal Server Error',
      });
      expect(text).not.toMatch(/pglite|closed|stack|at /i);
      const health = await call(broken, '/health');
      expect(health.status).toBe(503);
      expect(health.json).toEqual({
        statusCode: 503,
        message: 'The database is not reachable',
        error: 'Service Unavailable',
      });
    } finally {
      await broken.close();
    }
  });
});

describe('a body without Content-Type', () => {
  it('is a 415', async () => {
    const response = await fetch(`${app.url}/events/${newId()}`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${alice}` },
      body: new Blob([JSON.stringify(validBody)]),
    });
    expect(response.status).toBe(415);
    expect(await response.json()).toEqual({
      statusCode: 415,
      message: 'Content-Type must be application/json',
      error: 'Unsupported Media Type',
    });
  });
});

describe('a token whose sub the database cannot store as sent', () => {
  // A NUL made the write a 500; an unpaired surrogate was stored as U+FFFD, so the creator's own
  // token no longer matched `createdBy` (403 on its own event).
  it.each([
    ['a NUL', 'al\u0000ice'],
    ['an unpaired surrogate', 'al\ud800ice'],
  ])('with %s is a 401 and writes nothing', async (_what, sub) => {
    const id = newId('sub');
    const { status, json } = await call(app, `/events/${id}`, {
      method: 'PUT',
      token: await hmacToken(sub),
      body: validBody,
    });
    expect(status).toBe(401);
    expect((json as { message: string }).message).toBe(
      'token "sub" must be valid Unicode text without a NUL character',
    );
    expect((await call(app, `/events/${id}`)).status).toBe(404);
  });
});
