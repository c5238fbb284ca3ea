import {
  defaultSecretRefusal,
  SandboxSettingError,
  sandboxSecretsForced,
} from '@platform/default-secrets/default-secrets';
import { ConfigError, integer } from '../settings/parse.js';

/** How the exchange reaches the payment gateway as a merchant (see briefs' gateway contract). */
export interface PaygateConfig {
  /** Base URL of the gateway, no trailing slash. @default 'http://127.0.0.1:3200' (`PAYGATE_URL`) */
  readonly url: string;
  /** Our merchant id at the gateway. @default 'exchange' (`PAYGATE_MERCHANT_ID`) */
  readonly merchantId: string;
  /**
   * Shared secret signing server-to-server calls and callbacks. @default 'sandbox-exchange-secret'
   * (`PAYGATE_MERCHANT_SECRET`; the gateway's documented sandbox value)
   */
  readonly merchantSecret: string;
  /**
   * The secret in effect before the last rotation at the gateway: callbacks signed with it still
   * verify, so the gateway's grace period (`secrets rotate`) loses none. Nothing is signed with it.
   * @default unset: only `merchantSecret` (`PAYGATE_MERCHANT_SECRET_PREVIOUS`)
   */
  readonly previousMerchantSecret: string | undefined;
  /**
   * The merchant's public key per lower-case fiat currency, shown in the account object.
   * @default uah pk_test_exchange_uah, usd pk_test_exchange_usd, rub pk_test_exchange_rub
   * (`PAYGATE_PUBLIC_KEYS`, `UAH:key,USD:key,...`)
   */
  readonly publicKeys: Readonly<Record<string, string>>;
  /** Timeout of one call to the gateway in ms. @default 10000 (`PAYGATE_TIMEOUT_MS`) */
  readonly timeoutMs: number;
  /** Largest accepted age of a callback's timestamp in seconds. @default 300 (`PAYGATE_CALLBACK_WINDOW_S`) */
  readonly callbackWindowS: number;
  /**
   * How long the signed invoice form of a fiat deposit stays valid at the gateway, in seconds.
   * @default 3600 (`PAYGATE_FORM_TTL_S`, 60..604800)
   */
  readonly formTtlS: number;
  /**
   * A pending fiat deposit for which the gateway never reported an invoice is canceled after this
   * long, in seconds (src/fiat/deposit-expiry.ts). @default 7200 (`PAYGATE_DEPOSIT_TTL_S`, 60..2592000)
   */
  readonly depositTtlS: number;
}

export const DEFAULT_PAYGATE_PUBLIC_KEYS =
  'UAH:pk_test_exchange_uah,USD:pk_test_exchange_usd,RUB:pk_test_exchange_rub';

/** Parses `UAH:key,USD:key` into a map from lower-case currency to key. */
function publicKeys(env: NodeJS.ProcessEnv): Record<string, string> {
  const raw = env.PAYGATE_PUBLIC_KEYS || DEFAULT_PAYGATE_PUBLIC_KEYS;
  const keys: Record<string, string> = {};
  for (const item of raw.split(',')) {
    const match = /^\s*([A-Za-z]{2,10})\s*:\s*(\S+)\s*$/.exec(item);
    if (!match) throw new ConfigError('PAYGATE_PUBLIC_KEYS', `expected CUR:key[,CUR:key...], got "${item}"`);
    keys[match[1]!.toLowerCase()] = match[2]!;
  }
  return Object.freeze(keys);
}

export function paygateConfig(env: NodeJS.ProcessEnv): PaygateConfig {
  const url = (env.PAYGATE_URL || 'http://127.0.0.1:3200').replace(/\/+$/, '');
  if (!/^https?:\/\/[^/]+/.test(url))
    throw new ConfigError('PAYGATE_URL', `expected an http(s) URL, got "${url}"`);
  const merchantId = env.PAYGATE_MERCHANT_ID || 'exchange';
  const merchantSecret = env.PAYGATE_MERCHANT_SECRET || SANDBOX_MERCHANT_SECRET;
  if (merchantSecret.length < 8)
    throw new ConfigError('PAYGATE_MERCHANT_SECRET', 'expected 8 characters or more');
  const previousMerchantSecret = env.PAYGATE_MERCHANT_SECRET_PREVIOUS || undefined;
  if (previousMerchantSecret !== undefined && previousMerchantSecret.length < 8)
    throw new ConfigError('PAYGATE_MERCHANT_SECRET_PREVIOUS', 'expected 8 characters or more');
  return Object.freeze({
    url,
    merchantId,
    merchantSecret,
    previousMerchantSecret,
    publicKeys: publicKeys(env),
    timeoutMs: integer(env, 'PAYGATE_TIMEOUT_MS', 10_000, 100, 300_000),
    callbackWindowS: integer(env, 'PAYGATE_CALLBACK_WINDOW_S', 300, 10, 86_400),
    formTtlS: integer(env, 'PAYGATE_FORM_TTL_S', 3_600, 60, 604_800),
    depositTtlS: integer(env, 'PAYGATE_DEPOSIT_TTL_S', 7_200, 60, 2_592_000),
  });
}

/** The gateway's documented sandbox secret of merchant `exchange` (services/paygate README). */
export const SANDBOX_MERCHANT_SECRET = 'sandbox-exchange-secret';

/**
 * Anyone who reads the README can sign a "paid" callback with the sandbox secret, so it verifies
 * callbacks only on a loopback HOST without DATABASE_URL, unless ALLOW_SANDBOX_SECRETS=true
 * (@platform/default-secrets, issue 28).
 */
export function refuseSandboxPaygateSecret(
  env: NodeJS.ProcessEnv,
  host: string,
  paygateSettings: PaygateConfig,
): void {
  let forced: boolean;
  try {
    forced = sandboxSecretsForced(env);
  } catch (error) {
    if (error instanceof SandboxSettingError) throw new ConfigError(error.setting, error.message);
    throw error;
  }
  // Either secret verifies callbacks, so the previous one is held to the same rule.
  const settings = [
    ['PAYGATE_MERCHANT_SECRET', paygateSettings.merchantSecret],
    ['PAYGATE_MERCHANT_SECRET_PREVIOUS', paygateSettings.previousMerchantSecret],
  ] as const;
  for (const [setting, value] of settings) {
    if (value !== SANDBOX_MERCHANT_SECRET) continue;
    const refusal = defaultSecretRefusal(
      { setting, what: `the gateway's sandbox merchant secret "${SANDBOX_MERCHANT_SECRET}"` },
      { host, databaseUrl: Boolean(env.DATABASE_URL), forced },
    );
    if (refusal) throw new ConfigError(setting, refusal);
  }
}

/** The gateway settings with every default (tests and in-process apps). */
export function defaultPaygateConfig(): PaygateConfig {
  return paygateConfig({});
}
