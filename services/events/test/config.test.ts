import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config.js';

describe('loadConfig', () => {
  it('defaults to the embedded setup', () => {
    const config = loadConfig({ INIT_CWD: '/srv/app' });
    expect(config).toMatchObject({
      host: '127.0.0.1',
      port: 3300,
      basePath: '',
      storage: { kind: 'pglite', dir: '/srv/app/data/events/pgdata' },
      jwt: {
        auth: { kind: 'dev-secret-file', file: '/srv/app/data/events/jwt-secret' },
        clockToleranceSeconds: 30,
        memberClaim: 'member',
        requireExp: true,
      },
      bodyLimitBytes: 524_288,
      corsOrigin: '*',
    });
    expect(Object.isFrozen(config)).toBe(true);
  });

  it('reads every setting', () => {
    const config = loadConfig({
      PORT: '8000',
      BASE_PATH: '/api/',
      DATABASE_URL: 'postgres://u@db:5432/events',
      DATABASE_POOL_MAX: '20',
      JWT_JWKS_URL: 'https://id.example/jwks.json',
      JWT_ISSUER: 'https://id.example',
      JWT_AUDIENCE: 'events',
      JWT_CLOCK_TOLERANCE_SECONDS: '5',
      JWT_MEMBER_CLAIM: 'community_member',
      JWT_REQUIRE_EXP: 'false',
      CORS_ORIGIN: 'https://app.example, http://localhost:5173/',
    });
    expect(config.corsOrigin).toEqual(['https://app.example', 'http://localhost:5173']);
    expect(config.port).toBe(8000);
    expect(config.basePath).toBe('/api');
    expect(config.storage).toEqual({ kind: 'postgres', url: 'postgres://u@db:5432/events', poolMax: 20 });
    expect(config.jwt).toMatchObject({
      auth: { kind: 'jwks', url: 'https://id.example/jwks.json' },
      issuer: 'https://id.example',
      audience: 'events',
      clockToleranceSeconds: 5,
      memberClaim: 'community_member',
      requireExp: false,
    });
  });

  it.each([
    [{ PORT: 'eighty' }, 'PORT'],
    [{ PORT: '70000' }, 'PORT'],
    [{ DATABASE_URL: 'mysql://x' }, 'DATABASE_URL'],
    [{ JWT_SECRET: 'short' }, 'JWT_SECRET'],
    [{ JWT_SECRET: 'x'.repeat(40), JWT_JWKS_URL: 'https://id/jwks' }, 'JWT_SECRET'],
    [{ JWT_JWKS_URL: 'file:///etc/keys' }, 'JWT_JWKS_URL'],
    [{ BASE_PATH: 'api' }, 'BASE_PATH'],
    [{ LOG_LEVEL: 'loud' }, 'LOG_LEVEL'],
    [{ JWT_REQUIRE_EXP: 'maybe' }, 'JWT_REQUIRE_EXP'],
    [{ CORS_ORIGIN: 'https://app.example/path' }, 'CORS_ORIGIN'],
    [{ CORS_ORIGIN: 'app.example' }, 'CORS_ORIGIN'],
  ])('fails fast on %j naming %s', (env, setting) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(`Invalid setting ${setting}`);
  });
});
