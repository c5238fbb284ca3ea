import { describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';

describe('the development token (issue 28: a default secret never serves outside loopback)', () => {
  it('is refused on a HOST that is not loopback, unset or set explicitly, naming what to set', () => {
    const cases: Record<string, string>[] = [
      { HOST: '0.0.0.0' },
      { HOST: '::' },
      { HOST: '172.16.0.3' },
      { HOST: '0.0.0.0', BLOG_AUTH_TOKEN: 'blog-dev-token' },
      { HOST: '0.0.0.0', ALLOW_SANDBOX_SECRETS: 'false' },
    ];
    for (const env of cases) {
      expect(() => loadConfig(env, '/srv'), JSON.stringify(env)).toThrow(
        /the development token "blog-dev-token" .*HOST=.*set BLOG_AUTH_TOKEN to a secret of your own, or ALLOW_SANDBOX_SECRETS=true/,
      );
    }
  });

  it('is accepted with ALLOW_SANDBOX_SECRETS=true and on loopback; a token of our own serves anywhere', () => {
    expect(loadConfig({ HOST: '0.0.0.0', ALLOW_SANDBOX_SECRETS: 'true' }, '/srv').usingDevelopmentToken).toBe(
      true,
    );
    for (const host of ['127.0.0.1', 'localhost', '::1']) {
      expect(loadConfig({ HOST: host }, '/srv').authToken).toBe('blog-dev-token');
    }
    expect(loadConfig({ HOST: '0.0.0.0', BLOG_AUTH_TOKEN: 'a-token-of-our-own' }, '/srv').authToken).toBe(
      'a-token-of-our-own',
    );
    expect(() => loadConfig({ ALLOW_SANDBOX_SECRETS: 'hmm' }, '/srv')).toThrow(/ALLOW_SANDBOX_SECRETS/);
  });
});

describe('the idempotency store and journal settings (issue 41)', () => {
  it('default to 24 h, 50,000 answers, 10,000 per credential, 64 MiB and a 1 MiB journal; refuse others naming the setting', () => {
    const config = loadConfig({}, '/srv');
    expect(config.idempotency).toEqual({
      ttlMs: 86_400_000,
      maxKeys: 50_000,
      maxKeysPerCredential: 10_000,
      maxBytes: 67_108_864,
    });
    expect(config.journalCompactBytes).toBe(1_048_576);
    for (const name of [
      'IDEMPOTENCY_MAX_KEYS',
      'IDEMPOTENCY_MAX_KEYS_PER_CREDENTIAL',
      'IDEMPOTENCY_MAX_BYTES',
      'BLOG_JOURNAL_COMPACT_BYTES',
    ]) {
      expect(() => loadConfig({ [name]: '0' }, '/srv'), name).toThrow(
        new RegExp(`^${name} must be an integer`),
      );
    }
  });
});
