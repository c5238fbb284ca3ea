import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { requireBinary } from '../src/binaries.js';
import { startRedis } from '../src/redis.js';
import { rawCommand, respCommand } from '../src/wire.js';

/** A CA and one certificate it signed for 127.0.0.1, usable as server and client certificate. */
function makeCertificates(): { caFile: string; certFile: string; keyFile: string } {
  const openssl = requireBinary('openssl', 'openssl');
  const dir = mkdtempSync(join(tmpdir(), 'testkit-tls-'));
  const run = (...args: string[]) => execFileSync(openssl, args, { cwd: dir, stdio: 'pipe' });
  run(
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-days',
    '1',
    '-subj',
    '/CN=test-ca',
    '-keyout',
    'ca.key',
    '-out',
    'ca.crt',
  );
  run(
    'req',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-subj',
    '/CN=127.0.0.1',
    '-keyout',
    'node.key',
    '-out',
    'node.csr',
  );
  execFileSync('/bin/sh', ['-c', 'printf "subjectAltName=IP:127.0.0.1\\n" > ext.cnf'], { cwd: dir });
  run(
    'x509',
    '-req',
    '-in',
    'node.csr',
    '-CA',
    'ca.crt',
    '-CAkey',
    'ca.key',
    '-CAcreateserial',
    '-days',
    '1',
    '-extfile',
    'ext.cnf',
    '-out',
    'node.crt',
  );
  return { caFile: join(dir, 'ca.crt'), certFile: join(dir, 'node.crt'), keyFile: join(dir, 'node.key') };
}

describe('startRedis with TLS', () => {
  const files = makeCertificates();

  it('serves TLS only, and refuses a client without a certificate when authClients is set', async () => {
    const redis = await startRedis({ tls: { ...files, authClients: true } });
    try {
      expect(redis.url).toMatch(/^rediss:\/\//);
      const ca = readFileSync(files.caFile);
      const withCert = {
        ca,
        cert: readFileSync(files.certFile),
        key: readFileSync(files.keyFile),
      };
      expect(await rawCommand(redis.host, redis.port, respCommand('PING'), { tls: withCert })).toBe(
        '+PONG\r\n',
      );
      await expect(
        rawCommand(redis.host, redis.port, respCommand('PING'), { tls: { ca } }),
      ).rejects.toThrow();
      await expect(rawCommand(redis.host, redis.port, respCommand('PING'))).rejects.toThrow();
    } finally {
      await redis.stop();
    }
  });
});
