import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';

describe('gateway settings', () => {
  it('defaults to the local sandbox gateway and its documented merchant keys', () => {
    expect(loadConfig({}).paygate).toEqual({
      url: 'http://127.0.0.1:3200',
      merchantId: 'exchange',
      merchantSecret: 'sandbox-exchange-secret',
      previousMerchantSecret: undefined,
      publicKeys: { uah: 'pk_test_exchange_uah', usd: 'pk_test_exchange_usd', rub: 'pk_test_exchange_rub' },
      timeoutMs: 10_000,
      callbackWindowS: 300,
      formTtlS: 3600,
      depositTtlS: 7200,
    });
  });

  it('reads every PAYGATE_ setting and fails fast naming a wrong one', () => {
    const config = loadConfig({
      PAYGATE_URL: 'https://pay.example.com/',
      PAYGATE_MERCHANT_ID: 'ex2',
      PAYGATE_MERCHANT_SECRET: 'a-long-secret',
      PAYGATE_PUBLIC_KEYS: 'uah:pk_a, USD:pk_b',
      PAYGATE_TIMEOUT_MS: '2500',
      PAYGATE_CALLBACK_WINDOW_S: '60',
      PAYGATE_FORM_TTL_S: '600',
      PAYGATE_MERCHANT_SECRET_PREVIOUS: 'the-secret-before',
      PAYGATE_DEPOSIT_TTL_S: '900',
    }).paygate;
    expect(config).toEqual({
      url: 'https://pay.example.com',
      merchantId: 'ex2',
      merchantSecret: 'a-long-secret',
      previousMerchantSecret: 'the-secret-before',
      publicKeys: { uah: 'pk_a', usd: 'pk_b' },
      timeoutMs: 2500,
      callbackWindowS: 60,
      formTtlS: 600,
      depositTtlS: 900,
    });
    expect(() => loadConfig({ PAYGATE_URL: 'ftp://x' })).toThrow(/PAYGATE_URL/);
    expect(() => loadConfig({ PAYGATE_PUBLIC_KEYS: 'uah' })).toThrow(/PAYGATE_PUBLIC_KEYS/);
    expect(() => loadConfig({ PAYGATE_MERCHANT_SECRET: 'short' })).toThrow(/PAYGATE_MERCHANT_SECRET/);
    expect(() => loadConfig({ PAYGATE_TIMEOUT_MS: 'soon' })).toThrow(/PAYGATE_TIMEOUT_MS/);
    expect(() => loadConfig({ PAYGATE_FORM_TTL_S: '10' })).toThrow(/PAYGATE_FORM_TTL_S/);
    expect(() => loadConfig({ PAYGATE_MERCHANT_SECRET_PREVIOUS: 'short' })).toThrow(
      /PAYGATE_MERCHANT_SECRET_PREVIOUS/,
    );
    expect(() => loadConfig({ PAYGATE_DEPOSIT_TTL_S: '2h' })).toThrow(/PAYGATE_DEPOSIT_TTL_S/);
    expect(() => loadConfig({ PAYGATE_DEPOSIT_TTL_S: '59' })).toThrow(/PAYGATE_DEPOSIT_TTL_S/);
  });
});

describe('the sandbox merchant secret (issue 28: whoever reads the README could sign a "paid" callback)', () => {
  const KEY = { MASTER_KEY: 'ab'.repeat(32) };
  it('refuses it on a HOST that is not loopback or with DATABASE_URL, naming what to set', () => {
    for (const env of [
      { HOST: '0.0.0.0' },
      { HOST: '::' },
      { HOST: '10.1.2.3' },
      { HOST: '0.0.0.0', PAYGATE_MERCHANT_SECRET: 'sandbox-exchange-secret' },
      { DATABASE_URL: 'postgres://db/exchange', ...KEY },
      { HOST: '0.0.0.0', ALLOW_SANDBOX_SECRETS: 'false' },
    ]) {
      expect(() => loadConfig(env), JSON.stringify(env)).toThrow(
        /invalid setting PAYGATE_MERCHANT_SECRET: .*sandbox-exchange-secret.*set PAYGATE_MERCHANT_SECRET to a secret of your own, or ALLOW_SANDBOX_SECRETS=true/,
      );
    }
  });

  it('accepts it with ALLOW_SANDBOX_SECRETS=true, and a secret of our own anywhere', () => {
    const forced = { ALLOW_SANDBOX_SECRETS: 'true' };
    expect(loadConfig({ HOST: '0.0.0.0', ...forced }).paygate.merchantSecret).toBe('sandbox-exchange-secret');
    expect(loadConfig({ DATABASE_URL: 'postgres://db/x', ...KEY, ...forced }).paygate.merchantSecret).toBe(
      'sandbox-exchange-secret',
    );
    const own = { PAYGATE_MERCHANT_SECRET: 'a-merchant-secret-of-our-own' };
    expect(
      loadConfig({ HOST: '0.0.0.0', DATABASE_URL: 'postgres://db/x', ...KEY, ...own }).paygate.merchantSecret,
    ).toBe(own.PAYGATE_MERCHANT_SECRET);
    expect(() => loadConfig({ ALLOW_SANDBOX_SECRETS: 'perhaps' })).toThrow(/ALLOW_SANDBOX_SECRETS/);
  });

  it('refuses it as PAYGATE_MERCHANT_SECRET_PREVIOUS by the same rule (either secret verifies callbacks)', () => {
    const own = { PAYGATE_MERCHANT_SECRET: 'a-merchant-secret-of-our-own' };
    const previous = { PAYGATE_MERCHANT_SECRET_PREVIOUS: 'sandbox-exchange-secret' };
    expect(() => loadConfig({ HOST: '0.0.0.0', ...own, ...previous })).toThrow(
      /invalid setting PAYGATE_MERCHANT_SECRET_PREVIOUS: .*sandbox-exchange-secret/,
    );
    expect(() => loadConfig({ DATABASE_URL: 'postgres://db/x', ...KEY, ...own, ...previous })).toThrow(
      /PAYGATE_MERCHANT_SECRET_PREVIOUS/,
    );
    expect(
      loadConfig({ HOST: '0.0.0.0', ALLOW_SANDBOX_SECRETS: 'true', ...own, ...previous }).paygate
        .previousMerchantSecret,
    ).toBe('sandbox-exchange-secret');
    expect(loadConfig({ ...own, ...previous }).paygate.previousMerchantSecret).toBe(
      'sandbox-exchange-secret',
    );
  });

  it('accepts it on loopback without DATABASE_URL (npm start, tests)', () => {
    for (const host of ['127.0.0.1', 'localhost', '::1']) {
      expect(loadConfig({ HOST: host }).paygate.merchantSecret).toBe('sandbox-exchange-secret');
    }
  });
});
