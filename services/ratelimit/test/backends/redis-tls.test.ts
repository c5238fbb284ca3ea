import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { type RedisServer, startRedis } from '@platform/testkit/redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBackend } from '../../src/backends/create.js';
import { parseBackendSettings } from '../../src/settings/backend.js';
import { type CertPair, makeCa, makeLeaf } from '../observability/certs.js';
import { counterBackendContract } from './contract.js';

const op = { key: 'tls-key', hits: 1, ttlSeconds: 10, perSecond: false };

// The shared contract over TLS with an ACL user (KVSTORE_AUTH=<user>:<password>), for both the
// main and the per-second server.
counterBackendContract('redis single over TLS with an ACL user, and a per-second server alike', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'rl-redis-tls-acl-'));
  const ca = makeCa(dir, 'ca');
  const server = makeLeaf(dir, ca, 'server', 'redis', 'IP:127.0.0.1', 'serverAuth');
  const start = () =>
    startRedis({
      tls: { certFile: server.cert, keyFile: server.key, caFile: ca.cert, authClients: false },
      aclUsers: ['user limiter on >s3cret ~* +@all'],
      args: ['--requirepass', 'default-is-locked'],
    });
  const [main, perSecond] = [await start(), await start()];
  const backend = createBackend(
    parseBackendSettings({
      KVSTORE_URL: `127.0.0.1:${main.port}`,
      KVSTORE_TLS: 'true',
      KVSTORE_AUTH: 'limiter:s3cret',
      KVSTORE_TLS_CACERT: ca.cert,
      KVSTORE_PERSECOND: 'true',
      KVSTORE_PERSECOND_URL: `127.0.0.1:${perSecond.port}`,
      KVSTORE_PERSECOND_TLS: 'true',
      KVSTORE_PERSECOND_AUTH: 'limiter:s3cret',
    }),
  );
  return {
    backend,
    advanceSeconds: (s) => sleep(s * 1000 + 100),
    close: async () => {
      await backend.close();
      await main.stop();
      await perSecond.stop();
    },
  };
});

// The testkit's readiness probe sends no client certificate, so Redis runs with tls-auth-clients no;
// the client certificate is still configured and offered.
describe('KVSTORE_TLS (TLS to Redis)', () => {
  let dir: string;
  let ca: CertPair;
  let client: CertPair;
  let redis: RedisServer;
  let wrongName: RedisServer;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'rl-redis-tls-'));
    ca = makeCa(dir, 'ca');
    const server = makeLeaf(dir, ca, 'server', 'redis', 'IP:127.0.0.1,DNS:localhost', 'serverAuth');
    const other = makeLeaf(dir, ca, 'other', 'elsewhere', 'DNS:elsewhere.example', 'serverAuth');
    client = makeLeaf(dir, ca, 'client', 'ratelimit', 'DNS:ratelimit', 'clientAuth');
    redis = await startRedis({
      tls: { certFile: server.cert, keyFile: server.key, caFile: ca.cert, authClients: false },
    });
    wrongName = await startRedis({
      tls: { certFile: other.cert, keyFile: other.key, caFile: ca.cert, authClients: false },
    });
  });
  afterAll(async () => {
    await redis.stop();
    await wrongName.stop();
  });

  const env = (port: number, extra: Record<string, string> = {}) =>
    parseBackendSettings({
      KVSTORE_URL: `127.0.0.1:${port}`,
      KVSTORE_POOL_SIZE: '1',
      KVSTORE_TLS: 'true',
      KVSTORE_TLS_CACERT: ca.cert,
      BACKEND_TIMEOUT_MS: '1000',
      ...extra,
    });

  it('connects with the CA and a client certificate', async () => {
    const backend = createBackend(
      env(redis.port, { KVSTORE_TLS_CLIENT_CERT: client.cert, KVSTORE_TLS_CLIENT_KEY: client.key }),
    );
    try {
      expect(await backend.ready()).toBe(true);
      expect(await backend.increment([op])).toEqual([1]);
    } finally {
      await backend.close();
    }
  });

  it('is refused when the server certificate does not chain to KVSTORE_TLS_CACERT', async () => {
    const backend = createBackend(env(redis.port, { KVSTORE_TLS_CACERT: '' }));
    try {
      expect(await backend.ready()).toBe(false);
      await expect(backend.increment([op])).rejects.toThrow();
    } finally {
      await backend.close();
    }
  });

  it('checks the server name unless KVSTORE_TLS_SKIP_HOSTNAME_VERIFICATION', async () => {
    const strict = createBackend(env(wrongName.port));
    expect(await strict.ready()).toBe(false);
    await strict.close();
    const lenient = createBackend(env(wrongName.port, { KVSTORE_TLS_SKIP_HOSTNAME_VERIFICATION: 'true' }));
    try {
      expect(await lenient.ready()).toBe(true);
      expect(await lenient.increment([op])).toEqual([1]);
    } finally {
      await lenient.close();
    }
  });
});
