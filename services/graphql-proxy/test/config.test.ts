import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { EMBEDDED_BLOG_TOKEN, loadConfig } from '../src/config.js';

describe('loadConfig', () => {
  it('defaults to the embedded blog upstream with its development token and cwd-relative data', () => {
    const config = loadConfig({}, '/srv/app');
    expect(config).toMatchObject({
      upstreamEndpoint: 'http://127.0.0.1:4000/graphql',
      embedded: true,
      authToken: EMBEDDED_BLOG_TOKEN,
      mode: 'GETMODE',
      port: 5001,
      corsOrigin: '*',
      cacheDir: '/srv/app/data/graphql-proxy/cache',
      queueDir: '/srv/app/data/graphql-proxy/queue',
      localDbPath: '/srv/app/data/graphql-proxy/local-db.json',
      localSyncOnStart: false,
    });
  });

  it('never sends the development token to an upstream that was configured explicitly', () => {
    const config = loadConfig({ UPSTREAM_GRAPHQL_ENDPOINT: 'https://cms.example/graphql' }, '/srv');
    expect(config.authToken).toBeUndefined();
  });

  it('resolves paths against PATHS_BASE_DIR or the package folder', () => {
    expect(loadConfig({ PATHS_BASE_DIR: '/base', CACHE_DIR: 'c' }, '/srv').cacheDir).toBe('/base/c');
    const script = loadConfig({ PATHS_RELATIVE_TO: 'script' }, '/srv');
    expect(script.queueDir).toBe(path.resolve(import.meta.dirname, '..', 'data/graphql-proxy/queue'));
    expect(loadConfig({ LOCAL_DB_PATH: '/abs/db.json' }, '/srv').localDbPath).toBe('/abs/db.json');
  });

  it('parses a list of CORS origins and SETMODE defaults', () => {
    const config = loadConfig(
      { CORS_ORIGIN: 'https://a.example, http://localhost:3000', GRAPHQL_MODE: 'setmode' },
      '/',
    );
    expect(config.corsOrigin).toEqual(['https://a.example', 'http://localhost:3000']);
    expect(config.mode).toBe('SETMODE');
    expect(config.localSyncOnStart).toBe(true);
  });

  it('fails fast naming the wrong setting', () => {
    expect(() => loadConfig({ GRAPHQL_MODE: 'WRITE' })).toThrow(/GRAPHQL_MODE/);
    expect(() => loadConfig({ PORT: 'abc' })).toThrow(/PORT/);
    expect(() => loadConfig({ UPSTREAM_GRAPHQL_ENDPOINT: 'ftp://x' })).toThrow(/UPSTREAM_GRAPHQL_ENDPOINT/);
    expect(() => loadConfig({ PATHS_RELATIVE_TO: 'home' })).toThrow(/PATHS_RELATIVE_TO/);
    expect(() => loadConfig({ CORS_ORIGIN: 'https://a.example/path' })).toThrow(/CORS_ORIGIN/);
    expect(() => loadConfig({ RETRY_BASE_MS: '5000', RETRY_MAX_MS: '100' })).toThrow(/RETRY_MAX_MS/);
  });
});

describe('loadConfig: the management API on a network address', () => {
  it('refuses to start on a non-loopback HOST without ADMIN_TOKEN', () => {
    expect(() => loadConfig({ HOST: '0.0.0.0' }, '/srv')).toThrow(/ADMIN_TOKEN/);
    expect(() => loadConfig({ HOST: '192.168.1.5' }, '/srv')).toThrow(/ADMIN_TOKEN/);
    expect(
      loadConfig(
        { HOST: '0.0.0.0', ADMIN_TOKEN: 'a-long-admin-token', AUTH_TOKEN: 'a-blog-token-of-our-own' },
        '/srv',
      ).host,
    ).toBe('0.0.0.0');
    expect(loadConfig({ HOST: '::1' }, '/srv').host).toBe('::1');
    expect(loadConfig({ HOST: 'localhost' }, '/srv').host).toBe('localhost');
  });
});

describe("the blog's development token (issue 28: a default secret never serves outside loopback)", () => {
  const ADMIN = { ADMIN_TOKEN: 'a-long-admin-token' };
  it('is refused on a HOST that is not loopback, by default in embedded mode or set explicitly', () => {
    const cases: Record<string, string>[] = [
      { HOST: '0.0.0.0', ...ADMIN },
      { HOST: '10.0.0.9', ...ADMIN },
      {
        HOST: '0.0.0.0',
        ...ADMIN,
        UPSTREAM_GRAPHQL_ENDPOINT: 'http://blog:4000/graphql',
        AUTH_TOKEN: 'blog-dev-token',
      },
      { HOST: '0.0.0.0', ...ADMIN, ALLOW_SANDBOX_SECRETS: 'false' },
    ];
    for (const env of cases) {
      expect(() => loadConfig(env, '/srv'), JSON.stringify(env)).toThrow(
        /AUTH_TOKEN, the blog's development token "blog-dev-token", .*HOST=.*set AUTH_TOKEN to a secret of your own, or ALLOW_SANDBOX_SECRETS=true/,
      );
    }
  });

  it('is accepted with ALLOW_SANDBOX_SECRETS=true, and on loopback; other tokens serve anywhere', () => {
    expect(loadConfig({ HOST: '0.0.0.0', ...ADMIN, ALLOW_SANDBOX_SECRETS: 'true' }, '/srv').authToken).toBe(
      'blog-dev-token',
    );
    for (const host of ['127.0.0.1', 'localhost', '::1']) {
      expect(loadConfig({ HOST: host }, '/srv').authToken).toBe('blog-dev-token');
    }
    expect(
      loadConfig({ HOST: '0.0.0.0', ...ADMIN, UPSTREAM_GRAPHQL_ENDPOINT: 'http://blog:4000/graphql' }, '/srv')
        .authToken,
    ).toBeUndefined();
    expect(() => loadConfig({ ALLOW_SANDBOX_SECRETS: 'perhaps' }, '/srv')).toThrow(/ALLOW_SANDBOX_SECRETS/);
  });
});
