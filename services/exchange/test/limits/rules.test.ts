import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEFAULT_LIMITS_FILE, loadConfig } from '../../src/config.js';
import { hit, windowEnded } from '../../src/limits/fixed-window.js';
import { parseLimits } from '../../src/limits/limits-file.js';
import { SHIPPED_LIMITS, SHIPPED_RATELIMIT_CONFIG } from '../../src/limits/limits-ratelimit-config.js';
import { ratelimitConfigYaml } from '../../src/limits/ratelimit-config.js';
import { isExempt, type LimitRule, rulesFor } from '../../src/limits/rules.js';

const rule = (unit: LimitRule['unit'], requestsPerUnit: number): LimitRule => ({
  name: 'r',
  routes: 'public',
  per: 'address',
  unit,
  requestsPerUnit,
});

describe('fixed windows (pure, clock as an argument)', () => {
  const minute = rule('minute', 2);
  // 12:00:45 UTC: 15 s left in the minute window.
  const t = Date.UTC(2026, 10, 25, 12, 0, 45);

  it('allows up to the limit, then refuses with the seconds left in the window', () => {
    const a = hit(minute, undefined, t);
    const b = hit(minute, a.counter, t + 100);
    const c = hit(minute, b.counter, t + 200);
    expect([a, b, c].map((x) => [x.verdict.allowed, x.verdict.remaining, x.verdict.resetSeconds])).toEqual([
      [true, 1, 15],
      [true, 0, 15],
      [false, 0, 15],
    ]);
    expect(c.counter.count).toBe(3);
    expect(c.verdict).toMatchObject({ limit: 2, windowSeconds: 60 });
  });

  it('aligns windows to the epoch: the count restarts at the minute, not 60 s after the first hit', () => {
    const first = hit(minute, undefined, t);
    const full = hit(minute, hit(minute, first.counter, t).counter, t);
    expect(full.verdict.allowed).toBe(false);
    const next = hit(minute, full.counter, Date.UTC(2026, 10, 25, 12, 1, 0));
    expect(next.verdict).toMatchObject({ allowed: true, remaining: 1, resetSeconds: 60 });
    expect(windowEnded(minute, full.counter, Date.UTC(2026, 10, 25, 12, 0, 59, 999))).toBe(false);
    expect(windowEnded(minute, full.counter, Date.UTC(2026, 10, 25, 12, 1, 0))).toBe(true);
  });

  it('day and second windows', () => {
    expect(hit(rule('day', 1), undefined, Date.UTC(2026, 10, 25, 23, 59, 30)).verdict.resetSeconds).toBe(30);
    expect(hit(rule('second', 1), undefined, t + 999).verdict.resetSeconds).toBe(1);
  });
});

describe('limits file', () => {
  it('the shipped file parses; routes are classified by rule', () => {
    const parsed = parseLimits(readFileSync(SHIPPED_LIMITS, 'utf8'));
    expect(parsed.ok).toBe(true);
    if (!parsed.ok) return;
    expect(parsed.config.domain).toBe('exchange');
    expect(rulesFor(parsed.config, 'private', 'key').map((r) => r.name)).toEqual([
      'private-key-second',
      'private-key-minute',
    ]);
    expect(isExempt(parsed.config, '/health')).toBe(true);
    expect(isExempt(parsed.config, '/docs/json')).toBe(true);
    expect(isExempt(parsed.config, '/v3/timestamp')).toBe(false);
  });

  it('the shipped services/ratelimit config is the one generated from the shipped limits file', () => {
    const parsed = parseLimits(readFileSync(SHIPPED_LIMITS, 'utf8'));
    if (!parsed.ok) throw new Error(parsed.error);
    expect(readFileSync(SHIPPED_RATELIMIT_CONFIG, 'utf8')).toBe(
      ratelimitConfigYaml(parsed.config, 'config/limits.yaml'),
    );
  });

  it.each([
    [
      'rules: [{ name: a, routes: public, per: key, unit: second, requests_per_unit: 1 }]',
      /per: key needs routes: private/,
    ],
    ['rules: [{ name: a, routes: public, per: address, unit: week, requests_per_unit: 1 }]', /unit must be/],
    [
      'rules: [{ name: a, routes: public, per: address, unit: second, requests_per_unit: 0 }]',
      /requests_per_unit/,
    ],
    [
      'rules: [{ name: a, routes: public, per: address, unit: second, requests_per_unit: 1.5 }]',
      /requests_per_unit/,
    ],
    [
      'rules: [{ name: A_1, routes: public, per: address, unit: second, requests_per_unit: 1 }]',
      /name must be/,
    ],
    [
      'rules: [{ name: a, routes: both, per: address, unit: second, requests_per_unit: 1 }]',
      /routes must be/,
    ],
    [
      'rules: [{ name: a, routes: public, per: address, unit: second, requests_per_unit: 1, burst: 2 }]',
      /unknown key 'burst'/,
    ],
    [
      'rules: [{ name: a, routes: public, per: address, unit: second, requests_per_unit: 1 }, { name: a, routes: private, per: key, unit: second, requests_per_unit: 1 }]',
      /duplicate name 'a'/,
    ],
    ['limits: []', /unknown key 'limits'/],
    ['exempt: [health]', /exempt/],
    ['rules: [', /not valid YAML/],
  ])('refuses %s', (text, message) => {
    const parsed = parseLimits(text);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.error).toMatch(message);
  });
});

describe('request limit settings', () => {
  it('defaults: on, the bundled file, in-process, 100 ms, fail-open, socket address', () => {
    const config = loadConfig({}, '/srv/app');
    expect(config.limits).toMatchObject({
      enabled: true,
      file: DEFAULT_LIMITS_FILE,
      grpcTarget: undefined,
      timeoutMs: 100,
      failureMode: 'open',
    });
    expect(config.limits.rules.rules.length).toBe(4);
    expect(config.trustedProxies).toEqual([]);
  });

  it('RATE_LIMITS_STORE: the database for a cluster node on PostgreSQL, memory for one process, or as set', () => {
    const pg = {
      DATABASE_URL: 'postgres://u@127.0.0.1:5432/x',
      MASTER_KEY: 'ab'.repeat(32),
      ALLOW_SANDBOX_SECRETS: 'true',
    };
    const node = { ...pg, NODE_ID: 'n1', NODE_URL: 'http://10.0.0.1:3100' };
    expect(loadConfig({}, '/srv/app').limits.store).toBe('memory');
    // One process on PostgreSQL counts every request itself: no statement per request.
    expect(loadConfig(pg, '/srv/app').limits.store).toBe('memory');
    // The nodes of a cluster count together in the database.
    expect(loadConfig(node, '/srv/app').limits.store).toBe('database');
    expect(loadConfig({ ...pg, RATE_LIMITS_STORE: 'database' }, '/srv/app').limits.store).toBe('database');
    expect(loadConfig({ ...node, RATE_LIMITS_STORE: 'memory' }, '/srv/app').limits.store).toBe('memory');
    expect(() => loadConfig({ RATE_LIMITS_STORE: 'redis' }, '/srv/app')).toThrow(/RATE_LIMITS_STORE/);
  });

  it('reads every setting', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'limits-'));
    writeFileSync(path.join(dir, 'l.yaml'), 'domain: other\nrules: []\n');
    const config = loadConfig(
      {
        RATE_LIMITS_FILE: 'l.yaml',
        RATE_LIMITS_ENABLED: 'false',
        RATELIMIT_GRPC_URL: 'grpc://ratelimit:8081',
        RATELIMIT_TIMEOUT_MS: '250',
        RATELIMIT_FAILURE_MODE: 'closed',
        TRUSTED_PROXIES: '10.0.0.0/8, loopback, 2001:db8::1',
      },
      dir,
    );
    expect(config.limits).toMatchObject({
      enabled: false,
      grpcTarget: 'ratelimit:8081',
      timeoutMs: 250,
      failureMode: 'closed',
      rules: { domain: 'other', rules: [] },
    });
    expect(config.trustedProxies).toEqual(['10.0.0.0/8', 'loopback', '2001:db8::1']);
    expect(loadConfig({ RATELIMIT_GRPC_URL: 'unix:/run/rl.sock' }).limits.grpcTarget).toBe(
      'unix:/run/rl.sock',
    );
  });

  it('fails fast naming the wrong setting', () => {
    expect(() => loadConfig({ RATE_LIMITS_FILE: '/no/such/limits.yaml' })).toThrow(/RATE_LIMITS_FILE/);
    const dir = mkdtempSync(path.join(tmpdir(), 'limits-'));
    writeFileSync(path.join(dir, 'bad.yaml'), 'rules: [{ name: a }]\n');
    expect(() => loadConfig({ RATE_LIMITS_FILE: 'bad.yaml' }, dir)).toThrow(/RATE_LIMITS_FILE.*rules\[0\]/);
    expect(() => loadConfig({ RATE_LIMITS_ENABLED: 'perhaps' })).toThrow(/RATE_LIMITS_ENABLED/);
    expect(() => loadConfig({ RATELIMIT_GRPC_URL: 'http://ratelimit' })).toThrow(/RATELIMIT_GRPC_URL/);
    expect(() => loadConfig({ RATELIMIT_TIMEOUT_MS: '0' })).toThrow(/RATELIMIT_TIMEOUT_MS/);
    expect(() => loadConfig({ RATELIMIT_FAILURE_MODE: 'deny' })).toThrow(/RATELIMIT_FAILURE_MODE/);
    expect(() => loadConfig({ TRUSTED_PROXIES: '10.0.0.0/33' })).toThrow(/TRUSTED_PROXIES/);
    expect(() => loadConfig({ TRUSTED_PROXIES: 'proxy.local' })).toThrow(/TRUSTED_PROXIES/);
  });
});
