import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Exposure, sandboxSecretsForced } from '@platform/default-secrets/default-secrets';
import { ConfigError, integer, storageSetting, trustedProxies } from '@platform/http-edge/env-settings';
import { dataPath } from '@platform/logging/data-dir';
import { type LogSettings, parseLogSettings } from '@platform/logging/settings';
import { type MetricsSettings, parseMetricsSettings } from '@platform/observability/settings';
import type { StorageConfig } from '@platform/sql-storage/open';

export interface Config {
  /** @default 3200 (`PORT`) */
  readonly port: number;
  /** @default '127.0.0.1' (`HOST`) */
  readonly host: string;
  /** The address payers' browsers and merchants reach the gateway at; form actions use it. @default `http://127.0.0.1:<PORT>` (`PUBLIC_URL`) */
  readonly publicUrl: string;
  /**
   * True when `PUBLIC_URL` is unset: the address then follows the port the server listens on, so
   * with `PORT=0` form actions carry the port the system gave, not `:0`. @default true
   */
  readonly publicUrlFromListener: boolean;
  /** `DATA_DIR` @default '<repository root>/data/paygate' (`@platform/logging/data-dir` says the rule) */
  readonly dataDir: string;
  readonly storage: StorageConfig;
  /** Merchants, methods and services. @default the bundled `config/gateway.yaml` (`PAYGATE_CONFIG`) */
  readonly catalogFile: string;
  /**
   * Every `PAYGATE_MERCHANT_SECRET_<ID>`, `PAYGATE_MERCHANT_CALLBACK_URL_<ID>` and
   * `PAYGATE_MERCHANT_RETURN_URL_<ID>` variable, by name (the gateway file's loader reads them).
   */
  readonly merchantEnv: ReadonlyMap<string, string>;
  /**
   * Where the gateway runs, for the rule on sandbox secrets: a merchant's `sandbox_secret` serves
   * only on a loopback `HOST` without `DATABASE_URL`, unless `ALLOW_SANDBOX_SECRETS=true`
   * (@packages/default-secrets). @default `ALLOW_SANDBOX_SECRETS` false
   */
  readonly secretExposure: Exposure;
  /** Largest accepted difference between a merchant request's timestamp and server time. @default 300 (`SIGNATURE_WINDOW_SECONDS`) */
  readonly signatureWindowSeconds: number;
  /** An unpaid invoice expires after this long. @default 1800 (`INVOICE_TTL_SECONDS`) */
  readonly invoiceTtlSeconds: number;
  /** Cards a payer may try on one invoice (a declined card leaves it open for another) before it fails. @default 3 (`CARD_ATTEMPTS_MAX`) */
  readonly cardAttemptsMax: number;
  /** How long the sandbox payout processor takes to settle a payout. @default 2000 (`PAYOUT_SETTLE_MS`) */
  readonly payoutSettleMs: number;
  /** How often the background loop looks for due callbacks, payouts and expiries. @default 500 (`WORKER_INTERVAL_MS`) */
  readonly workerIntervalMs: number;
  /** First retry delay of a callback; doubles on every failure. @default 1000 (`CALLBACK_RETRY_BASE_MS`) */
  readonly callbackRetryBaseMs: number;
  /** Largest retry delay of a callback. @default 300000 (`CALLBACK_RETRY_MAX_MS`) */
  readonly callbackRetryMaxMs: number;
  /** Time allowed for one callback request. @default 10000 (`CALLBACK_TIMEOUT_MS`) */
  readonly callbackTimeoutMs: number;
  /** Attempts before a callback is dead-lettered (listed and retried with the admin tool). @default 25 (`CALLBACK_MAX_ATTEMPTS`) */
  readonly callbackMaxAttempts: number;
  /** Callbacks in flight at once per process. @default 64 (`CALLBACK_CONCURRENCY`) */
  readonly callbackConcurrency: number;
  /**
   * The seed of the callback faults of a merchant whose `callback_faults` names none, so a sandbox
   * run can be repeated. @default a random one, logged at start (`TEST_SEED`)
   */
  readonly testSeed: number | undefined;
  /**
   * Invoices a client address (an IPv6 address by its /64) may create without the merchant's
   * signature of the form per window (README "Unsigned invoices"); 0: every create must be signed.
   * @default 20 (`UNSIGNED_INVOICES_PER_ADDRESS`)
   */
  readonly unsignedInvoicesPerAddress: number;
  /** The window of `unsignedInvoicesPerAddress`, in seconds. @default 60 (`UNSIGNED_INVOICES_WINDOW_SECONDS`) */
  readonly unsignedInvoicesWindowSeconds: number;
  /**
   * Proxies whose `X-Forwarded-For` names the client, for the per-address limit (Fastify
   * `trustProxy`): addresses, CIDRs, `loopback`, `linklocal`, `uniquelocal`. @default none: the
   * socket's address (`TRUSTED_PROXIES`)
   */
  readonly trustedProxies: readonly string[];
  /** Largest accepted request body in bytes. @default 65536 (`BODY_LIMIT`) */
  readonly bodyLimit: number;
  /** `LOG_LEVEL` @default "info"; `LOG_FORMAT` @default pretty on a terminal, json otherwise */
  readonly log: LogSettings;
  /** The metrics listener: `METRICS_HOST` @default "127.0.0.1", `METRICS_PORT` @default 9200 (`0`: any free port, `off`: none) */
  readonly metrics: MetricsSettings;
}

export const DEFAULT_CATALOG_FILE = fileURLToPath(new URL('../config/gateway.yaml', import.meta.url));

export { ConfigError } from '@platform/http-edge/env-settings';

/** `TEST_SEED` as the test kit reads it (an integer, or a list of which the first counts here). */
function testSeed(raw: string | undefined): number | undefined {
  const first = raw?.split(',')[0]?.trim();
  if (!first) return undefined;
  if (!/^-?\d{1,15}$/.test(first)) throw new ConfigError('TEST_SEED', `expected an integer, got "${raw}"`);
  return Math.abs(Number(first));
}

const SECRET_PREFIX = 'PAYGATE_MERCHANT_SECRET_';
const MERCHANT_PREFIX =
  /^PAYGATE_MERCHANT_(SECRET|CALLBACK_URL|CALLBACK_FAULTS|RETURN_URL|WEBSITE|ICON)_[A-Z0-9_]+$/;

/** Reads the configuration from the environment once; fails fast naming the wrong setting. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env, cwd = process.cwd()): Config {
  const dataDir = dataPath(env.DATA_DIR, 'paygate', env, cwd);
  const storage: StorageConfig = storageSetting(env, dataDir);
  const port = integer(env, 'PORT', 3200, 0, 65535);
  const host = env.HOST || '127.0.0.1';
  let publicUrl = env.PUBLIC_URL || `http://127.0.0.1:${port}`;
  try {
    const url = new URL(publicUrl);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error('protocol');
    publicUrl = publicUrl.replace(/\/+$/, '');
  } catch {
    throw new ConfigError('PUBLIC_URL', `expected an http(s) URL, got "${publicUrl}"`);
  }
  const log = parseLogSettings(env, { fail: (setting, detail) => new ConfigError(setting, detail) });
  const forced = sandboxSecretsForced(
    env,
    (error) => new ConfigError(error.setting, 'expected true or false'),
  );
  const merchantEnv = new Map<string, string>();
  for (const [name, value] of Object.entries(env)) {
    if (!MERCHANT_PREFIX.test(name) || value === undefined || value === '') continue;
    if (name.startsWith(SECRET_PREFIX) && value.length < 8) {
      throw new ConfigError(name, 'a merchant secret needs at least 8 characters');
    }
    merchantEnv.set(name, value);
  }
  const callbackRetryBaseMs = integer(env, 'CALLBACK_RETRY_BASE_MS', 1_000, 10, 3_600_000);
  const callbackRetryMaxMs = integer(env, 'CALLBACK_RETRY_MAX_MS', 300_000, 10, 86_400_000);
  if (callbackRetryMaxMs < callbackRetryBaseMs) {
    throw new ConfigError('CALLBACK_RETRY_MAX_MS', 'must not be below CALLBACK_RETRY_BASE_MS');
  }
  return Object.freeze({
    port,
    host,
    publicUrl,
    publicUrlFromListener: !env.PUBLIC_URL,
    dataDir,
    storage: Object.freeze(storage),
    catalogFile: env.PAYGATE_CONFIG ? path.resolve(cwd, env.PAYGATE_CONFIG) : DEFAULT_CATALOG_FILE,
    merchantEnv,
    secretExposure: Object.freeze({ host, databaseUrl: storage.kind === 'postgres', forced }),
    signatureWindowSeconds: integer(env, 'SIGNATURE_WINDOW_SECONDS', 300, 1, 3_600),
    invoiceTtlSeconds: integer(env, 'INVOICE_TTL_SECONDS', 1_800, 10, 604_800),
    cardAttemptsMax: integer(env, 'CARD_ATTEMPTS_MAX', 3, 1, 20),
    payoutSettleMs: integer(env, 'PAYOUT_SETTLE_MS', 2_000, 0, 3_600_000),
    workerIntervalMs: integer(env, 'WORKER_INTERVAL_MS', 500, 10, 60_000),
    callbackRetryBaseMs,
    callbackRetryMaxMs,
    callbackTimeoutMs: integer(env, 'CALLBACK_TIMEOUT_MS', 10_000, 100, 120_000),
    callbackMaxAttempts: integer(env, 'CALLBACK_MAX_ATTEMPTS', 25, 1, 1_000),
    callbackConcurrency: integer(env, 'CALLBACK_CONCURRENCY', 64, 1, 1_024),
    testSeed: testSeed(env.TEST_SEED),
    unsignedInvoicesPerAddress: integer(env, 'UNSIGNED_INVOICES_PER_ADDRESS', 20, 0, 1_000_000),
    unsignedInvoicesWindowSeconds: integer(env, 'UNSIGNED_INVOICES_WINDOW_SECONDS', 60, 1, 86_400),
    trustedProxies: trustedProxies(env),
    bodyLimit: integer(env, 'BODY_LIMIT', 65_536, 1_024, 10_485_760),
    log,
    metrics: parseMetricsSettings(env, 9200, (setting, detail) => new ConfigError(setting, detail)),
  });
}
