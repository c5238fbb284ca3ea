/**
 * Authentication and authorisation over HTTP: HMAC tokens signed here, a JWKS served by a real
 * node:http server, issuer/audience/clock checks, creator-only writes and PRIVATE visibility.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EventView } from '../src/domain/event.js';
import { createCachedEventStore } from '../src/storage/cached-event-store.js';
import type { EventStore } from '../src/storage/event-store.js';
import { call, hmacToken, newId, openPgliteStore, startApp, type TestApp, validBody } from './helpers.js';

/** What jose's generateKeyPair returns (the DOM CryptoKey type is not in this project's lib). */
type SigningKey = Awaited<ReturnType<typeof generateKeyPair>>['privateKey'];

let store: EventStore;
let app: TestApp;
const opened: TestApp[] = [];

beforeAll(async () => {
  // The read cache is on, as in production: visibility must hold for cached answers too.
  store = await createCachedEventStore(await openPgliteStore(), { maxEntries: 1_000 });
  app = await startApp({ store });
  opened.push(app);
});
afterAll(async () => {
  for (const running of opened) await running.close();
  await store.close();
});

async function create(token: string, access: 'PUBLIC' | 'PRIVATE' = 'PUBLIC'): Promise<string> {
  const id = newId();
  const { status } = await call(app, `/events/${id}`, {
    method: 'PUT',
    token,
    body: { ...validBody, access },
  });
  expect(status).toBe(201);
  return id;
}

describe('bearer tokens', () => {
  it('PUT and DELETE without a token are 401 with a Bearer challenge, and create nothing', async () => {
    const id = newId();
    const put = await call(app, `/events/${id}`, { method: 'PUT', body: validBody });
    expect(put.status).toBe(401);
    expect(put.json).toEqual({
      statusCode: 401,
      message: expect.stringContaining('Bearer'),
      error: 'Unauthorized',
    });
    expect(put.headers.get('www-authenticate')).toBe('Bearer realm="events"');
    expect((await call(app, `/events/${id}`, { method: 'DELETE' })).status).toBe(401);
    expect((await call(app, `/events/${id}`)).status).toBe(404);
  });

  it('authentication is checked before the body: no token + bad body is still 401', async () => {
    const { status } = await call(app, `/events/${newId()}`, { method: 'PUT', rawBody: '{oops' });
    expect(status).toBe(401);
  });

  it.each([
    ['expired', () => hmacToken('alice', { expiresIn: -3_600 }), 'token expired'],
    ['signed with another secret', () => hmacToken('alice', { secret: 'x'.repeat(40) }), 'signature'],
    ['unsigned (alg none)', async () => unsignedToken('alice'), 'not allowed'],
    ['garbage', async () => 'not.a.jwt', 'malformed'],
  ])('%s token -> 401 naming the reason', async (_label, makeToken, reason) => {
    const id = newId();
    const token = await makeToken();
    const { status, json, headers } = await call(app, `/events/${id}`, {
      method: 'PUT',
      token,
      body: validBody,
    });
    expect(status).toBe(401);
    expect((json as { message: string }).message).toContain(reason);
    expect(headers.get('www-authenticate')).toContain('error="invalid_token"');
    expect((await call(app, `/events/${id}`)).status).toBe(404);
  });

  it('a token without sub is refused', async () => {
    const token = await new SignJWT({})
      .setProtectedHeader({ alg: 'HS256' })
      .setExpirationTime('5m')
      .sign(new TextEncoder().encode('a-test-secret-that-is-at-least-32-bytes-long'));
    expect((await call(app, `/events/${newId()}`, { method: 'PUT', token, body: validBody })).status).toBe(
      401,
    );
  });

  it('accepts HS256, HS384 and HS512 with the secret, every time, and none of them with another', async () => {
    // The verifier keeps one imported key per algorithm: each must be the secret under its own hash.
    for (const alg of ['HS512', 'HS256', 'HS384', 'HS512'] as const) {
      const good = await call(app, `/events/${newId()}`, {
        method: 'PUT',
        token: await hmacToken('alice', { alg }),
        body: validBody,
      });
      expect(good.status, alg).toBe(201);
      const forged = await call(app, `/events/${newId()}`, {
        method: 'PUT',
        token: await hmacToken('alice', { alg, secret: 'z'.repeat(40) }),
        body: validBody,
      });
      expect(forged.status, alg).toBe(401);
    }
  });

  it('a non-Bearer Authorization header is 401, also on GET (never treated as anonymous)', async () => {
    const id = await create(await hmacToken('alice'));
    const basic = await call(app, `/events/${id}`, { headers: { authorization: 'Basic YWxpY2U6eA==' } });
    expect(basic.status).toBe(401);
    const forged = await call(app, `/events/${id}`, {
      token: await hmacToken('alice', { secret: 'y'.repeat(40) }),
    });
    expect(forged.status).toBe(401);
  });

  it('clock tolerance accepts a token expired within the skew, not beyond it', async () => {
    const tolerant = await startApp({ store, clockToleranceSeconds: 60 });
    opened.push(tolerant);
    const justExpired = await hmacToken('alice', { expiresIn: -30 });
    const longExpired = await hmacToken('alice', { expiresIn: -120 });
    expect(
      (await call(tolerant, `/events/${newId()}`, { method: 'PUT', token: justExpired, body: validBody }))
        .status,
    ).toBe(201);
    expect(
      (await call(tolerant, `/events/${newId()}`, { method: 'PUT', token: longExpired, body: validBody }))
        .status,
    ).toBe(401);
    expect(
      (await call(app, `/events/${newId()}`, { method: 'PUT', token: justExpired, body: validBody })).status,
    ).toBe(401);
  });

  it('issuer and audience are checked when configured', async () => {
    const strict = await startApp({ store, issuer: 'https://id.example', audience: 'events-api' });
    opened.push(strict);
    const put = async (token: string) =>
      (await call(strict, `/events/${newId()}`, { method: 'PUT', token, body: validBody })).status;
    expect(
      await put(await hmacToken('alice', { issuer: 'https://id.example', audience: 'events-api' })),
    ).toBe(201);
    expect(
      await put(await hmacToken('alice', { issuer: 'https://evil.example', audience: 'events-api' })),
    ).toBe(401);
    expect(await put(await hmacToken('alice', { issuer: 'https://id.example', audience: 'other-api' }))).toBe(
      401,
    );
    expect(await put(await hmacToken('alice'))).toBe(401);
  });
});

describe('only the creator may change an event', () => {
  it('another user gets 403 on PUT and DELETE, and the event is unchanged', async () => {
    const id = await create(await hmacToken('alice'));
    const before = (await call(app, `/events/${id}`)).text;
    const bob = await hmacToken('bob');
    const put = await call(app, `/events/${id}`, {
      method: 'PUT',
      token: bob,
      body: { ...validBody, name: 'mine' },
    });
    expect(put.status).toBe(403);
    expect(put.json).toEqual({ statusCode: 403, message: expect.any(String), error: 'Forbidden' });
    expect((await call(app, `/events/${id}`, { method: 'DELETE', token: bob })).status).toBe(403);
    // A member is not the creator either.
    const member = await hmacToken('carol', { member: true });
    expect((await call(app, `/events/${id}`, { method: 'DELETE', token: member })).status).toBe(403);
    expect((await call(app, `/events/${id}`)).text).toBe(before);
  });
});

describe('PRIVATE events', () => {
  it('exist only for their creator and members: 404 and absent from lists for everyone else', async () => {
    const alice = await hmacToken('alice');
    const id = await create(alice, 'PRIVATE');
    const bob = await hmacToken('bob');
    const member = await hmacToken('carol', { member: true });

    expect((await call(app, `/events/${id}`)).json).toEqual({
      statusCode: 404,
      message: 'Event not found',
      error: 'Not Found',
    });
    expect((await call(app, `/events/${id}`, { token: bob })).status).toBe(404);
    expect((await call(app, `/events/${id}`, { method: 'DELETE', token: bob })).status).toBe(404);
    expect((await call(app, `/events/${id}`, { token: alice })).status).toBe(200);
    expect((await call(app, `/events/${id}`, { token: member })).status).toBe(200);

    const ids = async (token?: string) =>
      ((await call(app, '/events?limit=100', { token })).json as EventView[]).map((event) => event.eventId);
    expect(await ids()).not.toContain(id);
    expect(await ids(bob)).not.toContain(id);
    expect(await ids(alice)).toContain(id);
    expect(await ids(member)).toContain(id);
    const anonymousTotal = Number((await call(app, '/events')).headers.get('x-total-count'));
    const memberTotal = Number((await call(app, '/events', { token: member })).headers.get('x-total-count'));
    expect(memberTotal).toBeGreaterThan(anonymousTotal);
  });
});

describe('base path', () => {
  it('serves the event routes under BASE_PATH, with prefixed Location and Link', async () => {
    const prefixed = await startApp({ store, basePath: '/api/v1' });
    opened.push(prefixed);
    const id = newId();
    const put = await call(prefixed, `/api/v1/events/${id}`, {
      method: 'PUT',
      token: await hmacToken('alice'),
      body: validBody,
    });
    expect(put.status).toBe(201);
    expect(put.headers.get('location')).toBe(`/api/v1/events/${id}`);
    expect((await call(prefixed, '/api/v1/events?limit=1')).headers.get('link')).toContain(
      '</api/v1/events?page=',
    );
    expect((await call(prefixed, `/events/${id}`)).status).toBe(404);
    expect((await call(prefixed, '/health')).status).toBe(200);
  });
});

describe('JWKS served over HTTP', () => {
  let jwks: Server;
  let jwksUrl: string;
  let jwksApp: TestApp;
  let privateKey: SigningKey;
  let otherKey: SigningKey;
  let requests = 0;

  beforeAll(async () => {
    const pair = await generateKeyPair('ES256', { extractable: true });
    privateKey = pair.privateKey;
    otherKey = (await generateKeyPair('ES256')).privateKey;
    const publicJwk = { ...(await exportJWK(pair.publicKey)), kid: 'k1', alg: 'ES256', use: 'sig' };
    jwks = createServer((request, response) => {
      requests += 1;
      if (request.url !== '/.well-known/jwks.json') {
        response.writeHead(404).end();
        return;
      }
      response
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ keys: [publicJwk] }));
    });
    await new Promise<void>((resolve) => jwks.listen(0, '127.0.0.1', resolve));
    jwksUrl = `http://127.0.0.1:${(jwks.address() as AddressInfo).port}/.well-known/jwks.json`;
    jwksApp = await startApp({ store, key: { kind: 'jwks', url: jwksUrl } });
    opened.push(jwksApp);
  });
  afterAll(async () => {
    jwks.closeAllConnections();
    await new Promise((resolve) => jwks.close(resolve));
  });

  const es256 = (key: SigningKey, sub: string) =>
    new SignJWT({})
      .setProtectedHeader({ alg: 'ES256', kid: 'k1' })
      .setSubject(sub)
      .setExpirationTime('5m')
      .sign(key);

  it('accepts a token signed by a key of the set (fetched from the server)', async () => {
    const token = await es256(privateKey, 'dave');
    const id = newId();
    const put = await call(jwksApp, `/events/${id}`, { method: 'PUT', token, body: validBody });
    expect(put.status).toBe(201);
    expect((put.json as EventView).createdBy).toBe('dave');
    expect(requests).toBeGreaterThan(0);
  });

  it('refuses a token signed by another key with the same kid', async () => {
    const token = await es256(otherKey, 'dave');
    expect(
      (await call(jwksApp, `/events/${newId()}`, { method: 'PUT', token, body: validBody })).status,
    ).toBe(401);
  });

  it('refuses HMAC tokens when a JWKS is configured (no algorithm confusion)', async () => {
    const token = await hmacToken('dave');
    const { status, json } = await call(jwksApp, `/events/${newId()}`, {
      method: 'PUT',
      token,
      body: validBody,
    });
    expect(status).toBe(401);
    expect((json as { message: string }).message).toContain('not allowed');
  });
});

function unsignedToken(sub: string): string {
  const encode = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const exp = Math.floor(Date.now() / 1000) + 300;
  return `${encode({ alg: 'none', typ: 'JWT' })}.${encode({ sub, exp })}.`;
}
