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
      ADMIN_TOKEN: 'admin-secret',
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
    const headers = { authorization: 'Bearer admin-secret' };
    expect((await app.fastify.inject({ method: 'GET', url: '/queue', headers })).json()).toEqual({
      mutations: [],
    });
    const missing = await app.fastify.inject({ method: 'POST', url: '/queue/nope/retry', headers });
    expect(missing.statusCode).toBe(404);
    const health = await app.fastify.inject({ method: 'GET', url: '/health' });
    expect(health.statusCode).toBe(200);
    expect(health.json()).toMatchObject({ authToken: 'missing', upstream: 'configured' });
  });
});
