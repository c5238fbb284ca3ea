import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';

describe('gateway settings', () => {
  it('defaults to the local sandbox gateway and its documented merchant keys', () => {
    expect(loadConfig({}).paygate).toEqual({
      url: 'http://127.0.0.1:3200',
      merchantId: 'exchange',
      merchantSecret: 'sandbox-exchange-secret',
      publicKeys: { uah: 'pk_test_exchange_uah', usd: 'pk_test_exchange_usd', rub: 'pk_test_exchange_rub' },
      timeoutMs: 10_000,
      callbackWindowS: 300,
      formTtlS: 3600,
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
    }).paygate;
    expect(config).toEqual({
      url: 'https://pay.example.com',
      merchantId: 'ex2',
      merchantSecret: 'a-long-secret',
      publicKeys: { uah: 'pk_a', usd: 'pk_b' },
      timeoutMs: 2500,
      callbackWindowS: 60,
      formTtlS: 600,
    });
    expect(() => loadConfig({ PAYGATE_URL: 'ftp://x' })).toThrow(/PAYGATE_URL/);
    expect(() => loadConfig({ PAYGATE_PUBLIC_KEYS: 'uah' })).toThrow(/PAYGATE_PUBLIC_KEYS/);
    expect(() => loadConfig({ PAYGATE_MERCHANT_SECRET: 'short' })).toThrow(/PAYGATE_MERCHANT_SECRET/);
    expect(() => loadConfig({ PAYGATE_TIMEOUT_MS: 'soon' })).toThrow(/PAYGATE_TIMEOUT_MS/);
    expect(() => loadConfig({ PAYGATE_FORM_TTL_S: '10' })).toThrow(/PAYGATE_FORM_TTL_S/);
  });
});
