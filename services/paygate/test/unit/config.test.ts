import { describe, expect, it } from 'vitest';
import { buildCatalog, CatalogError } from '../../src/catalog/load.js';
import { ConfigError, loadConfig } from '../../src/config.js';
import { bundledDocument } from '../support/catalog.js';

describe('config', () => {
  it('embeds every default', () => {
    const config = loadConfig({}, '/srv');
    expect(config).toMatchObject({
      port: 3200,
      host: '127.0.0.1',
      publicUrl: 'http://127.0.0.1:3200',
      dataDir: '/srv/data/paygate',
      storage: { kind: 'pglite', dataDir: '/srv/data/paygate/pgdata' },
      signatureWindowSeconds: 300,
      invoiceTtlSeconds: 1800,
      payoutSettleMs: 2000,
      callbackRetryBaseMs: 1000,
      callbackRetryMaxMs: 300000,
    });
    expect(Object.isFrozen(config)).toBe(true);
  });

  it('fails fast naming the wrong setting', () => {
    expect(() => loadConfig({ PORT: 'x' })).toThrow(new ConfigError('PORT', 'expected an integer, got "x"'));
    expect(() => loadConfig({ DATABASE_URL: 'mysql://x' })).toThrow(/DATABASE_URL/);
    expect(() => loadConfig({ PUBLIC_URL: 'ftp://x' })).toThrow(/PUBLIC_URL/);
    expect(() => loadConfig({ PAYGATE_MERCHANT_SECRET_EXCHANGE: 'short' })).toThrow(
      /PAYGATE_MERCHANT_SECRET_EXCHANGE/,
    );
    expect(() => loadConfig({ CALLBACK_RETRY_BASE_MS: '5000', CALLBACK_RETRY_MAX_MS: '1000' })).toThrow(
      /CALLBACK_RETRY_MAX_MS/,
    );
  });

  it('collects merchant secrets from the environment', () => {
    const config = loadConfig({ PAYGATE_MERCHANT_SECRET_EXCHANGE: 'a-long-merchant-secret' });
    expect(config.merchantEnv.get('PAYGATE_MERCHANT_SECRET_EXCHANGE')).toBe('a-long-merchant-secret');
  });

  it('collects callback faults per merchant and reads TEST_SEED as the test kit writes it', () => {
    const config = loadConfig({ PAYGATE_MERCHANT_CALLBACK_FAULTS_EXCHANGE: 'on', TEST_SEED: '11,12' });
    expect(config.merchantEnv.get('PAYGATE_MERCHANT_CALLBACK_FAULTS_EXCHANGE')).toBe('on');
    expect(config.testSeed).toBe(11);
    expect(loadConfig({}).testSeed).toBeUndefined();
    expect(() => loadConfig({ TEST_SEED: 'abc' })).toThrow(/TEST_SEED/);
  });
});

describe('gateway file', () => {
  it('loads the bundled merchants, methods and services', () => {
    const catalog = buildCatalog(bundledDocument(), new Map());
    expect(catalog.byPublicKey('pk_test_exchange_uah')?.currency).toBe('UAH');
    expect(catalog.byPublicKey('pk_test_exchange_usd')?.merchant.secret).toBe('sandbox-exchange-secret');
    expect([...catalog.methods.keys()]).toEqual([
      'payment_card',
      'advcash_wallet',
      'payeer',
      'perfectmoney_account',
      'perfectmoney_transfer',
    ]);
    for (const currency of ['UAH', 'USD', 'RUB']) {
      expect(catalog.servicesFor(currency, 'hpp').length).toBeGreaterThan(0);
      expect(catalog.servicesFor(currency, 'payout').length).toBeGreaterThan(0);
    }
    const secret = buildCatalog(
      bundledDocument(),
      new Map([['PAYGATE_MERCHANT_SECRET_EXCHANGE', 'from-the-env']]),
    );
    expect(secret.merchants.get('exchange')?.secret).toBe('from-the-env');
  });

  it('refuses a live merchant on the sandbox secret, and names broken entries', () => {
    const doc = bundledDocument() as { merchants: { exchange: { test_mode: boolean } } };
    doc.merchants.exchange.test_mode = false;
    expect(() => buildCatalog(doc, new Map())).toThrow(/PAYGATE_MERCHANT_SECRET_EXCHANGE/);
    expect(() =>
      buildCatalog(doc, new Map([['PAYGATE_MERCHANT_SECRET_EXCHANGE', 'sandbox-exchange-secret']])),
    ).toThrow(CatalogError);
    expect(
      buildCatalog(
        doc,
        new Map([['PAYGATE_MERCHANT_SECRET_EXCHANGE', 'a-real-live-secret-123']]),
      ).merchants.get('exchange')?.testMode,
    ).toBe(false);

    const badService = bundledDocument() as {
      services: Record<string, { method: string; amount_min: string }>;
    };
    (badService.services.payment_card_uah as { method: string }).method = 'carrier_pigeon';
    expect(() => buildCatalog(badService, new Map())).toThrow(
      /service payment_card_uah: unknown method carrier_pigeon/,
    );
    const badLimits = bundledDocument() as { services: Record<string, { amount_min: string }> };
    (badLimits.services.payment_card_uah as { amount_min: string }).amount_min = '999999999';
    expect(() => buildCatalog(badLimits, new Map())).toThrow(/amount_min is greater than amount_max/);
    expect(() => buildCatalog({ merchants: {} }, new Map())).toThrow(CatalogError);
  });
});

describe('sandbox merchant secrets (issue 28: they are in this repository)', () => {
  // The settings and the gateway file together, as server.ts loads them.
  const load = (env: Record<string, string>) => {
    const config = loadConfig(env);
    return buildCatalog(bundledDocument(), config.merchantEnv, 'gateway.yaml', config.secretExposure);
  };
  const OWN = { PAYGATE_MERCHANT_SECRET_EXCHANGE: 'a-merchant-secret-of-our-own' };

  it('refuses a merchant on its sandbox secret on a HOST that is not loopback or with DATABASE_URL', () => {
    const cases: Record<string, string>[] = [
      { HOST: '0.0.0.0' },
      { HOST: '::' },
      { HOST: '192.168.1.10' },
      { DATABASE_URL: 'postgres://db/paygate' },
      { HOST: '0.0.0.0', PAYGATE_MERCHANT_SECRET_EXCHANGE: 'sandbox-exchange-secret' },
      { HOST: '0.0.0.0', ALLOW_SANDBOX_SECRETS: 'false' },
    ];
    for (const env of cases) {
      expect(() => load(env), JSON.stringify(env)).toThrow(
        /merchant exchange's sandbox secret .*set PAYGATE_MERCHANT_SECRET_EXCHANGE to a secret of your own, or ALLOW_SANDBOX_SECRETS=true/,
      );
    }
  });

  it('accepts it with ALLOW_SANDBOX_SECRETS=true, and a secret of its own anywhere', () => {
    expect(load({ HOST: '0.0.0.0', ALLOW_SANDBOX_SECRETS: 'true' }).merchants.get('exchange')?.secret).toBe(
      'sandbox-exchange-secret',
    );
    expect([
      ...load({ DATABASE_URL: 'postgres://db/x', ALLOW_SANDBOX_SECRETS: '1' }).merchants.keys(),
    ]).toEqual(['exchange', 'try_it']);
    const own = load({ HOST: '0.0.0.0', DATABASE_URL: 'postgres://db/x', ...OWN });
    expect(own.merchants.get('exchange')?.secret).toBe(OWN.PAYGATE_MERCHANT_SECRET_EXCHANGE);
    // The try-it merchant (sandbox_only) is left out there rather than refusing the start.
    expect(own.merchants.has('try_it')).toBe(false);
    expect(own.byPublicKey('pk_test_try_it_uah')).toBeUndefined();
    expect(() => loadConfig({ ALLOW_SANDBOX_SECRETS: 'sure' })).toThrow(/ALLOW_SANDBOX_SECRETS/);
  });

  it('accepts it on loopback without DATABASE_URL (npm start, tests)', () => {
    for (const host of ['127.0.0.1', 'localhost', '::1']) {
      expect(load({ HOST: host }).merchants.get('exchange')?.secret).toBe('sandbox-exchange-secret');
    }
  });
});

describe("the prerequest's account (issue 28: it showed 127.0.0.1:3100 whatever the exchange's address)", () => {
  it('takes website and icon from PAYGATE_MERCHANT_WEBSITE_<ID> / _ICON_<ID>; the icon follows the website', () => {
    const merchant = (env: Record<string, string>) =>
      buildCatalog(bundledDocument(), loadConfig(env).merchantEnv).merchants.get('exchange');
    expect(merchant({})).toMatchObject({
      website: 'http://127.0.0.1:3100',
      icon: 'http://127.0.0.1:3100/favicon.ico',
    });
    expect(merchant({ PAYGATE_MERCHANT_WEBSITE_EXCHANGE: 'https://exchange.example' })).toMatchObject({
      website: 'https://exchange.example',
      icon: 'https://exchange.example/favicon.ico',
    });
    expect(
      merchant({
        PAYGATE_MERCHANT_WEBSITE_EXCHANGE: 'https://exchange.example',
        PAYGATE_MERCHANT_ICON_EXCHANGE: 'https://cdn.example/ex.png',
      }),
    ).toMatchObject({ website: 'https://exchange.example', icon: 'https://cdn.example/ex.png' });
    expect(() => merchant({ PAYGATE_MERCHANT_WEBSITE_EXCHANGE: 'exchange.example' })).toThrow(
      /PAYGATE_MERCHANT_WEBSITE_EXCHANGE/,
    );
  });
});
