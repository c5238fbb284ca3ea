import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { requireBinary } from '@platform/testkit/binaries';
import { launchOnFreePort } from '@platform/testkit/fronted';
import { type ManagedProcess, spawnManaged, waitUntilReady } from '@platform/testkit/process';
import { rawCommand } from '@platform/testkit/wire';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBackend } from '../../src/backends/create.js';
import { parseBackendSettings } from '../../src/settings/backend.js';
import { type CertPair, makeCa, makeLeaf } from '../observability/certs.js';

const op = (key: string) => ({ key, hits: 1, ttlSeconds: 10, perSecond: false });

/** memcached's own TLS (`-Z`), requiring a client certificate signed by `ca` (ssl_verify_mode=2). */
async function startTlsMemcached(
  server: CertPair,
  ca: CertPair,
  client: CertPair,
): Promise<{ port: number; proc: ManagedProcess }> {
  const ssl = `ssl_chain_cert=${server.cert},ssl_key=${server.key},ssl_ca_cert=${ca.cert},ssl_verify_mode=2`;
  const tls = {
    ca: readFileSync(ca.cert),
    cert: readFileSync(client.cert),
    key: readFileSync(client.key),
    checkServerIdentity: () => undefined,
  };
  // memcached cannot bind port 0 and report it: a probed free port, tried again on a clash.
  return launchOnFreePort(async (port) => {
    const proc = spawnManaged({
      name: `memcached-tls:${port}`,
      command: requireBinary('memcached', 'memcached'),
      args: ['-l', '127.0.0.1', '-p', String(port), '-U', '0', '-m', '16', '-u', 'root', '-Z', '-o', ssl],
    });
    await waitUntilReady(proc, async () =>
      (await rawCommand('127.0.0.1', port, 'version\r\n', { tls })).startsWith('VERSION'),
    );
    return proc;
  });
}

describe('MEMSTORE_TLS (memcached -Z, client certificate required)', () => {
  let dir: string;
  let ca: CertPair;
  let client: CertPair;
  let good: { port: number; proc: ManagedProcess };
  let wrongName: { port: number; proc: ManagedProcess };
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'rl-mc-tls-'));
    ca = makeCa(dir, 'ca');
    const server = makeLeaf(dir, ca, 'server', 'memcached', 'IP:127.0.0.1', 'serverAuth');
    const other = makeLeaf(dir, ca, 'other', 'elsewhere', 'DNS:elsewhere.example', 'serverAuth');
    client = makeLeaf(dir, ca, 'client', 'ratelimit', 'DNS:ratelimit', 'clientAuth');
    good = await startTlsMemcached(server, ca, client);
    wrongName = await startTlsMemcached(other, ca, client);
  });
  afterAll(async () => {
    await good?.proc.stop();
    await wrongName?.proc.stop();
  });

  const open = (port: number, extra: Record<string, string>) =>
    createBackend(
      parseBackendSettings({
        BACKEND_TYPE: 'memstore',
        MEMSTORE_HOST_PORT: `127.0.0.1:${port}`,
        MEMSTORE_TLS: 'true',
        BACKEND_TIMEOUT_MS: '1000',
        ...extra,
      }),
    );
  const withCert = () => ({
    MEMSTORE_TLS_CACERT: ca.cert,
    MEMSTORE_TLS_CLIENT_CERT: client.cert,
    MEMSTORE_TLS_CLIENT_KEY: client.key,
  });

  it('counts over TLS with the CA and a client certificate', async () => {
    const b = open(good.port, withCert());
    try {
      expect(await b.ready()).toBe(true);
      expect(await b.increment([op('tls-a'), op('tls-a')])).toEqual([1, 2]);
      await b.close();
      const again = open(good.port, withCert());
      expect(await again.read([op('tls-a')])).toEqual([2]);
      await again.close();
    } finally {
      await b.close();
    }
  });

  it('is refused without a client certificate, and without the CA', async () => {
    const noCert = open(good.port, { MEMSTORE_TLS_CACERT: ca.cert });
    const noCa = open(good.port, {
      MEMSTORE_TLS_CLIENT_CERT: client.cert,
      MEMSTORE_TLS_CLIENT_KEY: client.key,
    });
    try {
      await expect(noCert.read([op('x')])).rejects.toThrow();
      await expect(noCa.read([op('x')])).rejects.toThrow(/self.signed|certificate/i);
    } finally {
      await noCert.close();
      await noCa.close();
    }
  });

  it('checks the server name unless MEMSTORE_TLS_SKIP_HOSTNAME_VERIFICATION', async () => {
    const strict = open(wrongName.port, withCert());
    const skip = open(wrongName.port, { ...withCert(), MEMSTORE_TLS_SKIP_HOSTNAME_VERIFICATION: 'true' });
    try {
      await expect(strict.read([op('x')])).rejects.toThrow(/altnames|Hostname/i);
      expect(await skip.increment([op('skip')])).toEqual([1]);
    } finally {
      await strict.close();
      await skip.close();
    }
  });

  it('plain text to a TLS port fails within the timeout instead of hanging', async () => {
    const plain = createBackend(
      parseBackendSettings({
        BACKEND_TYPE: 'memstore',
        MEMSTORE_HOST_PORT: `127.0.0.1:${good.port}`,
        BACKEND_TIMEOUT_MS: '500',
      }),
    );
    try {
      await expect(plain.read([op('x')])).rejects.toThrow();
    } finally {
      await plain.close();
    }
  });
});
