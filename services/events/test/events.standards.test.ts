/**
 * The standards details a browser client or a careless caller meets: CORS, every error (Fastify's
 * own included) in the NestJS shape with the request id, RFC 9457 problem details on request,
 * `cover` URL rules, `exp` required, RFC 6750 challenges, opaque ETags, capped validation messages
 * and an OpenAPI document listing every status. PGlite over a real listener.
 */
import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  call,
  hmacToken,
  newId,
  openPgliteStore,
  SECRET,
  startApp,
  type TestApp,
  validBody,
} from './helpers.js';

let app: TestApp;
let alice: string;

beforeAll(async () => {
  app = await startApp({
    store: await openPgliteStore(),
    corsOrigin: ['https://app.example'],
  });
  alice = await hmacToken('alice');
});
afterAll(async () => {
  await app.close();
  await app.store.close();
});

const REQUEST_ID = 'req-standards-1';

function expectNestShape(json: unknown, statusCode: number): void {
  expect(json).toEqual({ statusCode, message: expect.anything(), error: expect.any(String) });
}

describe('CORS', () => {
  it('answers a preflight from the allowed origin with 204 and the methods and headers', async () => {
    const response = await fetch(`${app.url}/events/x`, {
      method: 'OPTIONS',
      headers: {
        origin: 'https://app.example',
        'access-control-request-method': 'PUT',
        'access-control-request-headers': 'authorization, content-type, if-match',
      },
    });
    expect(response.status).toBe(204);
    expect(response.headers.get('access-control-allow-origin')).toBe('https://app.example');
    expect(response.headers.get('access-control-allow-methods')).toContain('PUT');
    expect(response.headers.get('access-control-allow-headers')?.toLowerCase()).toContain('authorization');
    expect(response.headers.get('access-control-allow-headers')?.toLowerCase()).toContain('if-match');
  });

  it('exposes X-Total-Count, Link and ETag to the allowed origin, also on errors', async () => {
    const list = await call(app, '/events', { headers: { origin: 'https://app.example' } });
    expect(list.headers.get('access-control-allow-origin')).toBe('https://app.example');
    const exposed = list.headers.get('access-control-expose-headers')?.toLowerCase() ?? '';
    for (const name of ['x-total-count', 'link', 'etag']) expect(exposed).toContain(name);
    const missing = await call(app, `/events/${newId()}`, { headers: { origin: 'https://app.example' } });
    expect(missing.status).toBe(404);
    expect(missing.headers.get('access-control-allow-origin')).toBe('https://app.example');
  });

  it('varies on Origin and Authorization together', async () => {
    const list = await call(app, '/events', { headers: { origin: 'https://app.example' } });
    expect(list.headers.get('vary')).toBe('Origin, Authorization');
  });

  it('gives other origins no CORS headers', async () => {
    const list = await call(app, '/events', { headers: { origin: 'https://evil.example' } });
    expect(list.headers.get('access-control-allow-origin')).toBeNull();
  });
});

describe("Fastify's own errors leave in the NestJS shape with the request id", () => {
  it('414 for a 600-character id, without echoing the URL', async () => {
    const long = 'x'.repeat(600);
    const { status, json, text, headers } = await call(app, `/events/${long}`, {
      headers: { 'x-request-id': REQUEST_ID },
    });
    expect(status).toBe(414);
    expectNestShape(json, 414);
    expect((json as { error: string }).error).toBe('URI Too Long');
    expect(text).not.toContain(long);
    expect(headers.get('x-request-id')).toBe(REQUEST_ID);
  });

  it('400 for a malformed URL, in the error shape with the request id', async () => {
    const { status, json, headers } = await call(app, '/events/%E0%A4%A', {
      headers: { 'x-request-id': REQUEST_ID },
    });
    expect(status).toBe(400);
    expect(json).toEqual({ statusCode: 400, message: 'The URL is malformed', error: 'Bad Request' });
    expect(headers.get('x-request-id')).toBe(REQUEST_ID);
  });

  it('413, 415 and 404 of unknown routes carry the request id', async () => {
    const big = await call(app, `/events/${newId()}`, {
      method: 'PUT',
      token: alice,
      body: { ...validBody, body: 'x'.repeat(600 * 1024) },
      headers: { 'x-request-id': REQUEST_ID },
    });
    expect(big.status).toBe(413);
    expectNestShape(big.json, 413);
    // the refused body is read to its end and the connection kept (@platform/http-edge/refused-body)
    expect(big.headers.get('connection')).not.toBe('close');
    expect(big.headers.get('x-request-id')).toBe(REQUEST_ID);
    const text = await call(app, `/events/${newId()}`, {
      method: 'PUT',
      token: alice,
      rawBody: 'hello',
      contentType: 'text/plain',
      headers: { 'x-request-id': REQUEST_ID },
    });
    expect(text.status).toBe(415);
    expectNestShape(text.json, 415);
    expect(text.headers.get('x-request-id')).toBe(REQUEST_ID);
    const unknown = await call(app, '/nope', { headers: { 'x-request-id': REQUEST_ID } });
    expect(unknown.status).toBe(404);
    expectNestShape(unknown.json, 404);
    expect(unknown.headers.get('x-request-id')).toBe(REQUEST_ID);
  });

  it('a known path with another method is 405 with allow, in the same shape', async () => {
    const wrong = await call(app, '/events', { method: 'POST', token: alice, body: validBody });
    expect(wrong.status).toBe(405);
    expectNestShape(wrong.json, 405);
    expect(wrong.headers.get('allow')).toBe('GET, HEAD');
  });

  it('has a landing page at / linking the docs and health', async () => {
    const page = await fetch(`${app.url}/`);
    expect(page.status).toBe(200);
    const html = await page.text();
    for (const href of ['/docs', '/health', '/events']) expect(html).toContain(`href="${href}"`);
  });
});

describe('problem details on request', () => {
  it('Accept: application/problem+json gets RFC 9457 problem details; the default stays NestJS', async () => {
    const id = newId();
    const problem = await call(app, `/events/${id}`, {
      headers: { accept: 'application/problem+json', 'x-request-id': REQUEST_ID },
    });
    expect(problem.status).toBe(404);
    expect(problem.headers.get('content-type')).toContain('application/problem+json');
    expect(problem.json).toEqual({
      type: 'about:blank',
      title: 'Not Found',
      status: 404,
      detail: 'Event not found',
      instance: `/events/${id}`,
      requestId: REQUEST_ID,
    });
    const invalid = await call(app, `/events/${newId()}`, {
      method: 'PUT',
      token: alice,
      body: { ...validBody, name: '' },
      headers: { accept: 'application/problem+json' },
    });
    expect(invalid.json).toMatchObject({ status: 400, errors: ['name should not be empty'] });
    const plain = await call(app, `/events/${id}`);
    expect(plain.headers.get('content-type')).toContain('application/json');
    expect(plain.json).toEqual({ statusCode: 404, message: 'Event not found', error: 'Not Found' });
  });
});

describe('cover URL rules', () => {
  it.each([
    ['no host', 'http:///a'],
    ['a space', 'https://x.test/a b.png'],
    ['credentials', 'https://user:pw@x.test/a.png'],
    ['a user name', 'https://user@x.test/a.png'],
    ['a tab', 'https://x.test/a\tb.png'],
  ])('refuses %s', async (_label, cover) => {
    const { status, json } = await call(app, `/events/${newId()}`, {
      method: 'PUT',
      token: alice,
      body: { ...validBody, cover },
    });
    expect(status).toBe(400);
    expect((json as { message: string[] }).message[0]).toContain('cover must be an absolute http(s) URL');
  });

  it('accepts a plain https URL with port, query and fragment', async () => {
    const cover = 'https://cdn.x.test:8443/img/a%20b.png?w=200#top';
    const { status } = await call(app, `/events/${newId()}`, {
      method: 'PUT',
      token: alice,
      body: { ...validBody, cover },
    });
    expect(status).toBe(201);
  });
});

describe('tokens', () => {
  it('a token without exp is refused (JWT_REQUIRE_EXP defaults on)', async () => {
    const noExp = await new SignJWT({})
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject('alice')
      .sign(new TextEncoder().encode(SECRET));
    const { status, headers } = await call(app, '/events', { token: noExp });
    expect(status).toBe(401);
    expect(headers.get('www-authenticate')).toContain('error="invalid_token"');
  });

  it('WWW-Authenticate error_description holds only the characters RFC 6750 allows', async () => {
    const noSub = await new SignJWT({})
      .setProtectedHeader({ alg: 'HS256' })
      .setExpirationTime('10m')
      .sign(new TextEncoder().encode(SECRET));
    const { status, headers, json } = await call(app, '/events', { token: noSub });
    expect(status).toBe(401);
    expect((json as { message: string }).message).toContain('"sub"');
    const challenge = headers.get('www-authenticate') ?? '';
    const description = /error_description="([^"]*)"$/.exec(challenge)?.[1];
    expect(description).toBeDefined();
    // RFC 6750 section 3: %x20-21 / %x23-5B / %x5D-7E, so no `"` or `\` inside the quoted value.
    expect(description).toMatch(/^[\x20\x21\x23-\x5b\x5d-\x7e]+$/);
    expect(challenge.match(/"/g)?.length).toBe(6);
  });
});

describe('PRIVATE ids and ETags do not leak', () => {
  it('PUT on another user PRIVATE id answers 404 like GET and DELETE', async () => {
    const id = newId();
    await call(app, `/events/${id}`, {
      method: 'PUT',
      token: alice,
      body: { ...validBody, access: 'PRIVATE' },
    });
    const bob = await hmacToken('bob');
    const put = await call(app, `/events/${id}`, { method: 'PUT', token: bob, body: validBody });
    expect(put.status).toBe(404);
    expect(put.json).toEqual({ statusCode: 404, message: 'Event not found', error: 'Not Found' });
    // A PUBLIC event of someone else is still a 403: its existence is public anyway.
    const open = newId();
    await call(app, `/events/${open}`, { method: 'PUT', token: alice, body: validBody });
    expect((await call(app, `/events/${open}`, { method: 'PUT', token: bob, body: validBody })).status).toBe(
      403,
    );
  });

  it('ETags are opaque: not a counter, different on every write, still usable with If-Match', async () => {
    const id = newId();
    const first = await call(app, `/events/${id}`, { method: 'PUT', token: alice, body: validBody });
    const second = await call(app, `/events/${newId()}`, { method: 'PUT', token: alice, body: validBody });
    const a = first.headers.get('etag') ?? '';
    const b = second.headers.get('etag') ?? '';
    expect(a).toMatch(/^"[A-Za-z0-9_-]{16,}"$/);
    expect(a).not.toMatch(/^"\d+"$/);
    expect(a).not.toBe(b);
    const replaced = await call(app, `/events/${id}`, {
      method: 'PUT',
      token: alice,
      body: validBody,
      headers: { 'if-match': a },
    });
    expect(replaced.status).toBe(200);
    expect(replaced.headers.get('etag')).not.toBe(a);
  });
});

describe('validation messages are capped', () => {
  it('20,000 unknown properties give a short answer saying how many more there were', async () => {
    const body: Record<string, unknown> = { ...validBody };
    for (let i = 0; i < 20_000; i++) body[`p${i}`] = 1;
    const { status, json, text } = await call(app, `/events/${newId()}`, {
      method: 'PUT',
      token: alice,
      rawBody: JSON.stringify(body),
    });
    expect(status).toBe(400);
    expect(text.length).toBeLessThan(4_096);
    const message = (json as { message: string[] }).message;
    expect(message.length).toBeLessThanOrEqual(21);
    expect(message.at(-1)).toMatch(/and \d+ more problems/);
  });

  it('a long property name is shortened in its message', async () => {
    const { json, text } = await call(app, `/events/${newId()}`, {
      method: 'PUT',
      token: alice,
      body: { ...validBody, ['k'.repeat(5_000)]: 1 },
    });
    expect((json as { message: string[] }).message[0]).toMatch(/^property k+… should not exist$/);
    expect(text.length).toBeLessThan(1_024);
  });
});

describe('OpenAPI document', () => {
  it('lists optional bearer on GETs and every status each route can return, with its body', async () => {
    const doc = (await call(app, '/docs/json')).json as {
      paths: Record<string, Record<string, { security?: unknown[]; responses: Record<string, unknown> }>>;
    };
    const statuses = (path: string, method: string) =>
      Object.keys(doc.paths[path]?.[method]?.responses ?? {}).sort();
    expect(statuses('/events', 'get')).toEqual(['200', '400', '401', '414', '500', '503']);
    expect(statuses('/events/{eventId}', 'get')).toEqual(
      ['200', '304', '400', '401', '404', '414', '500', '503'].sort(),
    );
    expect(statuses('/events/{eventId}', 'put')).toEqual(
      ['200', '201', '400', '401', '403', '404', '409', '412', '413', '414', '415', '500', '503'].sort(),
    );
    expect(statuses('/events/{eventId}', 'delete')).toEqual(
      ['204', '400', '401', '403', '404', '409', '412', '414', '500', '503'].sort(),
    );
    expect(doc.paths['/events']?.get?.security).toEqual([{}, { bearerAuth: [] }]);
    expect(doc.paths['/events/{eventId}']?.get?.security).toEqual([{}, { bearerAuth: [] }]);
  });
});
