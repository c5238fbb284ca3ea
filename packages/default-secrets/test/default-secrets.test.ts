import { describe, expect, it } from 'vitest';
import {
  defaultSecretRefusal,
  defaultSecretsAllowed,
  isLoopbackHost,
  SandboxSettingError,
  sandboxSecretsForced,
} from '../src/default-secrets.js';

describe('default secrets serve only on loopback without DATABASE_URL', () => {
  it('knows loopback addresses in every spelling, and nothing else', () => {
    for (const host of [
      '127.0.0.1',
      '127.1.2.3',
      'localhost',
      'LOCALHOST',
      '::1',
      '[::1]',
      '0:0:0:0:0:0:0:1',
      '::ffff:127.0.0.1',
    ]) {
      expect(isLoopbackHost(host), host).toBe(true);
    }
    for (const host of ['0.0.0.0', '::', '10.0.0.5', 'example.com', '128.0.0.1', '', 'localhost.example']) {
      expect(isLoopbackHost(host), host).toBe(false);
    }
  });

  it('reads ALLOW_SANDBOX_SECRETS strictly', () => {
    expect(sandboxSecretsForced({})).toBe(false);
    expect(sandboxSecretsForced({ ALLOW_SANDBOX_SECRETS: '' })).toBe(false);
    expect(sandboxSecretsForced({ ALLOW_SANDBOX_SECRETS: 'true' })).toBe(true);
    expect(sandboxSecretsForced({ ALLOW_SANDBOX_SECRETS: '1' })).toBe(true);
    expect(sandboxSecretsForced({ ALLOW_SANDBOX_SECRETS: 'false' })).toBe(false);
    expect(() => sandboxSecretsForced({ ALLOW_SANDBOX_SECRETS: 'yes please' })).toThrow(SandboxSettingError);
    // With `fail`: the service's own error, made from the SandboxSettingError.
    class ServiceConfigError extends Error {}
    expect(() =>
      sandboxSecretsForced(
        { ALLOW_SANDBOX_SECRETS: 'yes please' },
        (error) => new ServiceConfigError(error.message),
      ),
    ).toThrow(ServiceConfigError);
  });

  it('refuses off loopback or with DATABASE_URL, naming the setting and the way to force it', () => {
    const use = { setting: 'PAYGATE_MERCHANT_SECRET', what: 'the sandbox merchant secret' };
    expect(
      defaultSecretRefusal(use, { host: '127.0.0.1', databaseUrl: false, forced: false }),
    ).toBeUndefined();
    const exposed = defaultSecretRefusal(use, { host: '0.0.0.0', databaseUrl: false, forced: false });
    expect(exposed).toMatch(/HOST=0\.0\.0\.0, which is not a loopback address/);
    expect(exposed).toMatch(
      /set PAYGATE_MERCHANT_SECRET to a secret of your own, or ALLOW_SANDBOX_SECRETS=true/,
    );
    expect(defaultSecretRefusal(use, { host: '127.0.0.1', databaseUrl: true, forced: false })).toMatch(
      /DATABASE_URL set/,
    );
    expect(defaultSecretRefusal(use, { host: '0.0.0.0', databaseUrl: true, forced: true })).toBeUndefined();
    expect(defaultSecretsAllowed({ host: '::', databaseUrl: false, forced: false })).toBe(false);
  });
});
