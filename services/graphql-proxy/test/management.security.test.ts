import path from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp, type ProxyApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { tempDir } from './support/processes.js';

// The app in-process (Fastify inject) with ADMIN_TOKEN set and an upstream that is not there.
let dir: Awaited<ReturnType<typeof tempDir>>;
let app: ProxyApp;

beforeAll(async () => {
  dir = await tempDir('proxy-admin');
  const config = loadConfig(
    {
      UPSTREAM_GRAPHQL_ENDPOINT: 'http://127.0.0.1:9/graphql',
      ADMIN_TOKEN: 'admin-secret-for-tests',
      PATHS_BASE_DIR: dir.path,
    },
    path.join(dir.path, 'cwd'),
  );
  app = await buildApp(config, pino({ level: 'silent' }));
});

afterAll(async () => {
  await app?.close();
  await dir?.remove();
});

describe('management API with ADMIN_TOKEN', () => {
  it('refuses callers without the admin bearer token, with the error body', async () => {
    for (const [method, url] of [
      ['GET', '/queue'],
      ['POST', '/flush'],
      ['POST', '/local/sync'],
      ['GET', '/local/data'],
      ['DELETE', '/queue/abc'],
    ] as const) {
      const response = await app.fastify.inject({ method, url });
      expect(response.statusCode, `${method} ${url}`).toBe(401);
      expect(response.json()).toEqual({
        statusCode: 401,
        message: 'The management API requires Authorization: Bearer <ADMIN_TOKEN>',
        error: 'Unauthorized',
      });
    }
  });

  it('serves callers with the token, and leaves /health open', async () => {
    const headers = { authorization: 'Bearer admin-secret-for-tests' };
    expect((await app.fastify.inject({ method: 'GET', url: '/queue', headers })).json()).toEqual({
      mutations: [],
    });
    const missing = await app.fastify.inject({ method: 'POST', url: '/queue/nope/retry', headers });
    expect(missing.statusCode).toBe(404);
    const health = await app.fastify.inject({ method: 'GET', url: '/health' });
    expect(health.statusCode).toBe(200);
    expect(health.json()).toMatchObject({ authToken: false, upstream: 'configured' });
  });
});

describe('management routes and browsers (issue 19)', () => {
  it('never answers a management route with CORS headers, preflight included', async () => {
    for (const [method, url] of [
      ['GET', '/queue'],
      ['GET', '/local/data'],
      ['POST', '/flush'],
      ['POST', '/queue/abc/retry'],
    ] as const) {
      const preflight = await app.fastify.inject({
        method: 'OPTIONS',
        url,
        headers: { origin: 'https://evil.example', 'access-control-request-method': method },
      });
      expect(preflight.headers['access-control-allow-origin'], url).toBeUndefined();
      const answer = await app.fastify.inject({
        method,
        url,
        headers: { origin: 'https://evil.example', authorization: 'Bearer admin-secret-for-tests' },
      });
      expect(answer.statusCode, url).not.toBe(401);
      expect(answer.headers['access-control-allow-origin'], url).toBeUndefined();
    }
    // The GraphQL endpoint and /health keep CORS for browser clients.
    const health = await app.fastify.inject({
      method: 'GET',
      url: '/health',
      headers: { origin: 'https://blog.example' },
    });
    expect(health.headers['access-control-allow-origin']).toBe('*');
  });

  it('without ADMIN_TOKEN, refuses browser and rebinding requests to management routes (loopback only)', async () => {
    const local = await buildApp(
      loadConfig(
        { UPSTREAM_GRAPHQL_ENDPOINT: 'http://127.0.0.1:9/graphql', PATHS_BASE_DIR: dir.path },
        dir.path,
      ),
      pino({ level: 'silent' }),
    );
    try {
      const cli = await local.fastify.inject({
        method: 'GET',
        url: '/queue',
        headers: { host: '127.0.0.1:5001' },
      });
      expect(cli.statusCode).toBe(200);
      const page = await local.fastify.inject({
        method: 'POST',
        url: '/flush',
        headers: { host: '127.0.0.1:5001', origin: 'https://evil.example', 'content-type': 'text/plain' },
        payload: 'x',
      });
      expect(page.statusCode).toBe(403);
      expect(page.json()).toMatchObject({ statusCode: 403, error: 'Forbidden' });
      const sameSite = await local.fastify.inject({
        method: 'GET',
        url: '/local/data',
        headers: { host: '127.0.0.1:5001', 'sec-fetch-site': 'same-site', 'sec-fetch-mode': 'cors' },
      });
      expect(sameSite.statusCode).toBe(403);
      const rebound = await local.fastify.inject({
        method: 'GET',
        url: '/local/data',
        headers: { host: 'evil.example:5001' },
      });
      expect(rebound.statusCode).toBe(403);
    } finally {
      await local.close();
    }
  });
  it('answers router failures in the error body: a 600-character queue id (414), a URL that does not decode (400)', async () => {
    const headers = { authorization: 'Bearer admin-secret-for-tests' };
    const long = await app.fastify.inject({ method: 'GET', url: `/queue/${'a'.repeat(600)}`, headers });
    expect([long.statusCode, long.json()]).toEqual([
      414,
      { statusCode: 414, message: 'A path parameter is longer than 500 characters', error: 'URI Too Long' },
    ]);
    const bad = await app.fastify.inject({ method: 'GET', url: '/queue/%FF', headers });
    expect([bad.statusCode, bad.json()]).toEqual([
      400,
      { statusCode: 400, message: 'The URL is not valid (bad percent-encoding)', error: 'Bad Request' },
    ]);
  });
});

describe('outside the routes', () => {
  it('answers a known path with another method 405 with allow and an unknown path 404, in its shape', async () => {
    const wrong = await app.fastify.inject({ method: 'DELETE', url: '/health' });
    expect(wrong.statusCode).toBe(405);
    expect(wrong.headers.allow).toBe('GET, HEAD');
    expect(wrong.json()).toEqual({
      statusCode: 405,
      message: 'Method DELETE not allowed; allowed: GET, HEAD',
      error: 'Method Not Allowed',
    });
    const unknown = await app.fastify.inject({ method: 'GET', url: '/nope' });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json()).toEqual({ statusCode: 404, message: 'Route not found', error: 'Not Found' });
  });

  it('has a landing page at / linking GraphQL, health and the metrics listener (metrics are not served on this port)', async () => {
    const page = await app.fastify.inject({ method: 'GET', url: '/' });
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toContain('text/html');
    for (const href of ['/graphql', '/health', 'http://127.0.0.1:9501/metrics'])
      expect(page.body).toContain(`href="${href}"`);
    expect(page.body).not.toContain('href="/metrics"');
  });
});
