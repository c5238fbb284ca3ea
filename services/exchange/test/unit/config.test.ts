import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';

/** A merchant secret of our own: the sandbox one is refused off loopback or with DATABASE_URL. */
const OWN_SECRET = { PAYGATE_MERCHANT_SECRET: 'a-merchant-secret-of-our-own' };
describe('configuration', () => {
  it('defaults to the embedded database under ./data/exchange with a generated master key', () => {
    const config = loadConfig({}, '/srv/app');
    expect(config.port).toBe(3100);
    expect(config.storage).toEqual({
      kind: 'pglite',
      dataDir: path.join('/srv/app/data/exchange', 'pgdata'),
    });
    expect(config.masterKey).toEqual({
      kind: 'file',
      path: '/srv/app/data/exchange/master.key',
      createIfMissing: true,
    });
    expect(config.seedDemo).toBe(true);
    expect(config.orderPipelineDepth).toBe(1);
    expect(loadConfig({ ORDER_PIPELINE_DEPTH: '2' }).orderPipelineDepth).toBe(2);
    expect(loadConfig({}).bookSnapshots).toEqual({
      every: 50_000,
      keep: 2,
      intervalMs: 60_000,
      failpoint: undefined,
    });
    expect(loadConfig({ BOOK_SNAPSHOT_INTERVAL_MS: '0' }).bookSnapshots.intervalMs).toBe(0);
    expect(loadConfig({ BOOK_SNAPSHOT_EVERY: '0', BOOK_SNAPSHOT_KEEP: '3' }).bookSnapshots).toMatchObject({
      every: 0,
      keep: 3,
    });
    expect(Object.isFrozen(config)).toBe(true);
  });

  it('uses PostgreSQL with DATABASE_URL and then requires a master key', () => {
    const url = 'postgres://u@db/exchange';
    expect(() => loadConfig({ DATABASE_URL: url })).toThrow(/MASTER_KEY/);
    const config = loadConfig({ ...OWN_SECRET, DATABASE_URL: url, MASTER_KEY: 'ab'.repeat(32) });
    expect(config.storage).toMatchObject({ kind: 'postgres', url });
    expect(config.seedDemo).toBe(false);
  });

  it('fails fast naming the wrong setting', () => {
    expect(() => loadConfig({ PORT: 'eighty' })).toThrow(/PORT/);
    expect(() => loadConfig({ PORT: '70000' })).toThrow(/PORT/);
    expect(() => loadConfig({ MASTER_KEY: 'short' })).toThrow(/MASTER_KEY/);
    expect(() => loadConfig({ SEED_DEMO: 'maybe' })).toThrow(/SEED_DEMO/);
    expect(() => loadConfig({ DATABASE_URL: 'mysql://x' })).toThrow(/DATABASE_URL/);
    expect(() => loadConfig({ ORDER_PIPELINE_DEPTH: '0' })).toThrow(/ORDER_PIPELINE_DEPTH/);
    expect(() => loadConfig({ ORDER_PIPELINE_DEPTH: 'deep' })).toThrow(/ORDER_PIPELINE_DEPTH/);
    expect(() => loadConfig({ BOOK_SNAPSHOT_EVERY: '-1' })).toThrow(/BOOK_SNAPSHOT_EVERY/);
    expect(() => loadConfig({ BOOK_SNAPSHOT_KEEP: '1' })).toThrow(/BOOK_SNAPSHOT_KEEP/);
    expect(() => loadConfig({ BOOK_SNAPSHOT_INTERVAL_MS: '-1' })).toThrow(/BOOK_SNAPSHOT_INTERVAL_MS/);
  });

  it('writes mail to an outbox under the data folder unless SMTP_URL is set; links point at the listen address', () => {
    const config = loadConfig({ PORT: '3999' }, '/srv');
    expect(config.mail).toMatchObject({
      smtpUrl: undefined,
      outboxDir: '/srv/data/exchange/outbox',
      publicUrl: 'http://127.0.0.1:3999',
      publicUrlFromListener: true,
      linkTtlMs: 3_600_000,
      smtpRequireTls: false,
      smtpTlsRejectUnauthorized: true,
    });
    const smtp = loadConfig({
      SMTP_URL: 'smtps://mail.example.com:465',
      SMTP_USER: 'u',
      SMTP_PASSWORD: 'p',
      PUBLIC_URL: 'https://x.example.com/',
      LINK_TTL_SECONDS: '600',
    });
    expect(smtp.mail).toMatchObject({
      smtpUrl: 'smtps://mail.example.com:465',
      smtpUser: 'u',
      publicUrl: 'https://x.example.com',
      publicUrlFromListener: false,
      linkTtlMs: 600_000,
    });
  });

  it('names the wrong mail setting', () => {
    expect(() => loadConfig({ SMTP_URL: 'mail.example.com' })).toThrow(/SMTP_URL/);
    expect(() => loadConfig({ SMTP_URL: 'smtp://user:pw@mail.example.com' })).toThrow(/SMTP_URL.*SMTP_USER/);
    expect(() => loadConfig({ PUBLIC_URL: 'ftp://x' })).toThrow(/PUBLIC_URL/);
    expect(() => loadConfig({ LINK_TTL_SECONDS: '5' })).toThrow(/LINK_TTL_SECONDS/);
    expect(() => loadConfig({ SMTP_REQUIRE_TLS: 'sometimes' })).toThrow(/SMTP_REQUIRE_TLS/);
  });
});

describe('demo account seeding and the listen address', () => {
  it('seeds by default only with the embedded database on a loopback HOST', () => {
    for (const host of [
      '127.0.0.1',
      '127.8.9.10',
      'localhost',
      'LOCALHOST',
      '::1',
      '0:0:0:0:0:0:0:1',
      '::ffff:127.0.0.1',
    ]) {
      expect(loadConfig({ ...OWN_SECRET, HOST: host }).seedDemo, host).toBe(true);
    }
    for (const host of [
      '0.0.0.0',
      '::',
      '10.0.0.5',
      '192.168.1.2',
      'exchange.example.com',
      '128.0.0.1',
      '::2',
    ]) {
      expect(loadConfig({ ...OWN_SECRET, HOST: host }).seedDemo, host).toBe(false);
    }
  });

  it('refuses SEED_DEMO=true on a HOST that is not loopback, naming the setting', () => {
    for (const host of ['0.0.0.0', '::', '10.0.0.5', 'exchange.example.com']) {
      expect(() => loadConfig({ ...OWN_SECRET, HOST: host, SEED_DEMO: 'true' }), host).toThrow(
        /invalid setting SEED_DEMO: refused with HOST=/,
      );
      expect(
        () => loadConfig({ ...OWN_SECRET, HOST: host, SEED_DEMO: 'true', SEED_DEMO_FORCE: 'false' }),
        host,
      ).toThrow(/SEED_DEMO_FORCE=true/);
    }
    expect(loadConfig({ ...OWN_SECRET, HOST: '127.0.0.1', SEED_DEMO: 'true' }).seedDemo).toBe(true);
    expect(loadConfig({ ...OWN_SECRET, HOST: '0.0.0.0', SEED_DEMO: 'false' }).seedDemo).toBe(false);
  });

  it('seeds on any HOST when SEED_DEMO_FORCE=true says it is meant', () => {
    expect(
      loadConfig({ ...OWN_SECRET, HOST: '0.0.0.0', SEED_DEMO: 'true', SEED_DEMO_FORCE: 'true' }).seedDemo,
    ).toBe(true);
    // forcing allows, it does not turn seeding on
    expect(loadConfig({ ...OWN_SECRET, HOST: '0.0.0.0', SEED_DEMO_FORCE: 'true' }).seedDemo).toBe(false);
    expect(() => loadConfig({ SEED_DEMO_FORCE: 'sure' })).toThrow(/SEED_DEMO_FORCE/);
  });
});
