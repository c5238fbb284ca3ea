import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { StorageConfig } from '@platform/sql-storage/open';
import { DEFAULT_FAILURE_LIMITS, type FailureLimits } from './codes/limits.js';

/** Where the master key for encrypting API secrets at rest comes from. */
export type MasterKeySource =
  | { readonly kind: 'value'; readonly key: Buffer }
  | { readonly kind: 'file'; readonly path: string; readonly createIfMissing: boolean };

/** A coin served by a Bitcoin Core JSON-RPC node (wallet, issue 14). */
export interface NodeCustodyConfig {
  /** `http://user:password@host:port` (`CUSTODY_NODE_<CODE>_URL`) */
  readonly url: string;
  /** Node wallet name. @default 'exchange' (`CUSTODY_NODE_<CODE>_WALLET`) */
  readonly wallet: string;
  /** The node's `.cookie` file instead of credentials in the URL (`CUSTODY_NODE_<CODE>_COOKIE_FILE`) */
  readonly cookieFile: string | undefined;
}

/** Crypto deposits and withdrawals (src/wallet/, issue 14). */
export interface WalletConfig {
  /** Coins without a node are served by the sandbox custody. @default true (`CUSTODY_SANDBOX`) */
  readonly sandbox: boolean;
  /** How long a sandbox withdrawal takes to complete. @default 3000 (`SANDBOX_WITHDRAWAL_DELAY_MS`) */
  readonly sandboxWithdrawalDelayMs: number;
  /** Node custody per lower-case coin code, from `CUSTODY_NODE_<CODE>_URL`. @default none */
  readonly nodes: Readonly<Record<string, NodeCustodyConfig>>;
  /** Confirmations before a deposit is credited. @default btc=2,ltc=3,eth=12,usdt=12,xrp=1, others 1 (`DEPOSIT_CONFIRMATIONS`) */
  readonly confirmations: Readonly<Record<string, number>>;
  /** Interval of the deposit scan and withdrawal round. @default 2000 (`WALLET_POLL_MS`) */
  readonly pollMs: number;
  /** A withdrawal left `sending` this long is looked for by its tag and sent if not found. @default 30000 (`WITHDRAWAL_SEND_LEASE_MS`) */
  readonly sendLeaseMs: number;
  /** An unconfirmed withdrawal expires (funds released) after this long. @default 3600000 (`WITHDRAWAL_CONFIRMATION_TTL_MS`) */
  readonly confirmationTtlMs: number;
  /** Test-only fail point, see src/wallet/withdrawal-sender.ts. @default none (`EXCHANGE_FAILPOINT`) */
  readonly failpoint: string | undefined;
}

const DEFAULT_CONFIRMATIONS = 'btc=2,ltc=3,eth=12,usdt=12,xrp=1';

function walletConfig(env: NodeJS.ProcessEnv, cwd: string): WalletConfig {
  const nodes: Record<string, NodeCustodyConfig> = {};
  for (const [name, value] of Object.entries(env)) {
    const match = /^CUSTODY_NODE_([A-Z0-9]+)_URL$/.exec(name);
    if (!match || !value) continue;
    if (!/^https?:\/\//.test(value)) throw new ConfigError(name, 'expected an http:// URL of the node RPC');
    const code = match[1]!;
    const cookie = env[`CUSTODY_NODE_${code}_COOKIE_FILE`];
    nodes[code.toLowerCase()] = Object.freeze({
      url: value,
      wallet: env[`CUSTODY_NODE_${code}_WALLET`] || 'exchange',
      cookieFile: cookie ? path.resolve(cwd, cookie) : undefined,
    });
  }
  const confirmations: Record<string, number> = {};
  const raw = env.DEPOSIT_CONFIRMATIONS || DEFAULT_CONFIRMATIONS;
  for (const part of raw
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean)) {
    const match = /^([a-z0-9]{2,12})=(\d{1,4})$/.exec(part);
    if (!match || Number(match[2]) < 1) {
      throw new ConfigError('DEPOSIT_CONFIRMATIONS', `expected code=count pairs (count >= 1), got "${part}"`);
    }
    confirmations[match[1]!] = Number(match[2]);
  }
  return Object.freeze({
    sandbox: boolean(env, 'CUSTODY_SANDBOX', true),
    sandboxWithdrawalDelayMs: integer(env, 'SANDBOX_WITHDRAWAL_DELAY_MS', 3_000, 0, 86_400_000),
    nodes: Object.freeze(nodes),
    confirmations: Object.freeze(confirmations),
    pollMs: integer(env, 'WALLET_POLL_MS', 2_000, 50, 3_600_000),
    sendLeaseMs: integer(env, 'WITHDRAWAL_SEND_LEASE_MS', 30_000, 0, 86_400_000),
    confirmationTtlMs: integer(env, 'WITHDRAWAL_CONFIRMATION_TTL_MS', 3_600_000, 1_000, 30 * 86_400_000),
    failpoint: env.EXCHANGE_FAILPOINT || undefined,
  });
}

/** Outgoing mail (withdrawal and transfer-code confirmations) and the links in it. */
export interface MailConfig {
  /** SMTP server; unset = mails are written to `outboxDir`. (`SMTP_URL`, `smtp://` or `smtps://`) */
  readonly smtpUrl: string | undefined;
  /** @default unset (`SMTP_USER`) */
  readonly smtpUser: string | undefined;
  /** @default unset (`SMTP_PASSWORD`) */
  readonly smtpPassword: string | undefined;
  /** Refuse to send unless STARTTLS succeeds. @default false (`SMTP_REQUIRE_TLS`) */
  readonly smtpRequireTls: boolean;
  /** Verify the SMTP server's certificate. @default true (`SMTP_TLS_REJECT_UNAUTHORIZED`) */
  readonly smtpTlsRejectUnauthorized: boolean;
  /** @default 'Exchange <no-reply@exchange.invalid>' (`MAIL_FROM`) */
  readonly from: string;
  /** @default '<DATA_DIR>/outbox' (`MAIL_OUTBOX_DIR`) */
  readonly outboxDir: string;
  /** Base URL of the links in mails. @default 'http://<HOST>:<PORT>' (`PUBLIC_URL`) */
  readonly publicUrl: string;
  /** How long a confirm/cancel link works. @default 3600000 (`LINK_TTL_SECONDS`=3600, 60..604800) */
  readonly linkTtlMs: number;
}

export interface Config {
  /** @default 3100 (`PORT`) */
  readonly port: number;
  /** @default '127.0.0.1' (`HOST`) */
  readonly host: string;
  /** @default './data/exchange' relative to the working directory (`DATA_DIR`) */
  readonly dataDir: string;
  readonly storage: StorageConfig;
  /** YAML file with currencies, markets, fees and reference rates. @default the bundled `config/reference.yaml` */
  readonly referenceFile: string;
  readonly masterKey: MasterKeySource;
  /** Largest accepted difference between a nonce (ms) and server time. @default 300000 (`NONCE_WINDOW_MS`) */
  readonly nonceWindowMs: number;
  /** Largest accepted request body in bytes. @default 65536 (`BODY_LIMIT`) */
  readonly bodyLimit: number;
  /** Seed the demo account and write `<dataDir>/demo-api-key.json`. @default true only with the embedded database (`SEED_DEMO`) */
  readonly seedDemo: boolean;
  /** @default 'info' (`LOG_LEVEL`) */
  readonly logLevel: string;
  /**
   * Order batch statements in flight at once: with 2 or more, the next batch is computed and sent
   * while the previous one commits (src/orders/pipeline.ts). @default 1 (`ORDER_PIPELINE_DEPTH`, 1..8)
   */
  readonly orderPipelineDepth: number;
  /**
   * Failed transfer-code redemptions allowed per account and per client address within one window.
   * @default 10, 30, 900000 ms (`SVC_CODE_FAILURES_PER_ACCOUNT`, `SVC_CODE_FAILURES_PER_ADDRESS`, `SVC_CODE_FAILURE_WINDOW_MS`)
   */
  readonly codeFailureLimits: FailureLimits;
  /** Crypto deposits and withdrawals (issue 14). */
  readonly wallet: WalletConfig;
  readonly mail: MailConfig;
  /** The payment gateway for fiat deposits and withdrawals (src/fiat/). */
  readonly paygate: PaygateConfig;
}

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
   * The merchant's public key per lower-case fiat currency, shown in the account object.
   * @default uah pk_test_exchange_uah, usd pk_test_exchange_usd, rub pk_test_exchange_rub
   * (`PAYGATE_PUBLIC_KEYS`, `UAH:key,USD:key,...`)
   */
  readonly publicKeys: Readonly<Record<string, string>>;
  /** Timeout of one call to the gateway in ms. @default 10000 (`PAYGATE_TIMEOUT_MS`) */
  readonly timeoutMs: number;
  /** Largest accepted age of a callback's timestamp in seconds. @default 300 (`PAYGATE_CALLBACK_WINDOW_S`) */
  readonly callbackWindowS: number;
}

export const DEFAULT_PAYGATE_PUBLIC_KEYS =
  'UAH:pk_test_exchange_uah,USD:pk_test_exchange_usd,RUB:pk_test_exchange_rub';

export const DEFAULT_REFERENCE_FILE = fileURLToPath(new URL('../config/reference.yaml', import.meta.url));

export class ConfigError extends Error {
  constructor(setting: string, problem: string) {
    super(`invalid setting ${setting}: ${problem}`);
    this.name = 'ConfigError';
  }
}

function integer(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw)) throw new ConfigError(name, `expected an integer, got "${raw}"`);
  const value = Number(raw);
  if (value < min || value > max) throw new ConfigError(name, `expected ${min}..${max}, got ${value}`);
  return value;
}

function boolean(env: NodeJS.ProcessEnv, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (/^(1|true|yes|on)$/i.test(raw)) return true;
  if (/^(0|false|no|off)$/i.test(raw)) return false;
  throw new ConfigError(name, `expected true or false, got "${raw}"`);
}

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

function paygate(env: NodeJS.ProcessEnv): PaygateConfig {
  const url = (env.PAYGATE_URL || 'http://127.0.0.1:3200').replace(/\/+$/, '');
  if (!/^https?:\/\/[^/]+/.test(url))
    throw new ConfigError('PAYGATE_URL', `expected an http(s) URL, got "${url}"`);
  const merchantId = env.PAYGATE_MERCHANT_ID || 'exchange';
  const merchantSecret = env.PAYGATE_MERCHANT_SECRET || 'sandbox-exchange-secret';
  if (merchantSecret.length < 8)
    throw new ConfigError('PAYGATE_MERCHANT_SECRET', 'expected 8 characters or more');
  return Object.freeze({
    url,
    merchantId,
    merchantSecret,
    publicKeys: publicKeys(env),
    timeoutMs: integer(env, 'PAYGATE_TIMEOUT_MS', 10_000, 100, 300_000),
    callbackWindowS: integer(env, 'PAYGATE_CALLBACK_WINDOW_S', 300, 10, 86_400),
  });
}

/** The gateway settings with every default (tests and in-process apps). */
export function defaultPaygateConfig(): PaygateConfig {
  return paygate({});
}

/** Parses a 32-byte key written as 64 hex digits or as base64. */
export function parseMasterKey(raw: string, setting: string): Buffer {
  const text = raw.trim();
  const key = /^[0-9a-fA-F]{64}$/.test(text) ? Buffer.from(text, 'hex') : Buffer.from(text, 'base64');
  if (key.length !== 32) throw new ConfigError(setting, 'expected 32 bytes as 64 hex digits or base64');
  return key;
}

/**
 * The folder npm was invoked from (`INIT_CWD`), when different from the working directory: the
 * operator tool runs in the package folder but the root `npm start` keeps its data under the root.
 */
export function npmInvocationDir(
  env: NodeJS.ProcessEnv = process.env,
  cwd = process.cwd(),
): string | undefined {
  const invoked = env.INIT_CWD;
  if (!invoked || env.DATA_DIR || path.resolve(invoked) === path.resolve(cwd)) return undefined;
  return invoked;
}

/** Reads the configuration from the environment once; fails fast naming the wrong setting. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env, cwd = process.cwd()): Config {
  const dataDir = path.resolve(cwd, env.DATA_DIR || './data/exchange');
  const databaseUrl = env.DATABASE_URL;
  let storage: StorageConfig;
  if (databaseUrl) {
    if (!/^postgres(ql)?:\/\//.test(databaseUrl)) {
      throw new ConfigError('DATABASE_URL', 'expected a postgres:// or postgresql:// URL');
    }
    storage = {
      kind: 'postgres',
      url: databaseUrl,
      poolSize: integer(env, 'DATABASE_POOL_SIZE', 10, 1, 200),
    };
  } else {
    storage = { kind: 'pglite', dataDir: path.join(dataDir, 'pgdata') };
  }
  let masterKey: MasterKeySource;
  if (env.MASTER_KEY) masterKey = { kind: 'value', key: parseMasterKey(env.MASTER_KEY, 'MASTER_KEY') };
  else if (env.MASTER_KEY_FILE) {
    masterKey = { kind: 'file', path: path.resolve(cwd, env.MASTER_KEY_FILE), createIfMissing: false };
  } else if (storage.kind === 'pglite') {
    masterKey = { kind: 'file', path: path.join(dataDir, 'master.key'), createIfMissing: true };
  } else {
    throw new ConfigError('MASTER_KEY', 'required with DATABASE_URL (or set MASTER_KEY_FILE)');
  }
  const port = integer(env, 'PORT', 3100, 0, 65535);
  const logLevel = env.LOG_LEVEL || 'info';
  if (!['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].includes(logLevel)) {
    throw new ConfigError('LOG_LEVEL', `unknown level "${logLevel}"`);
  }
  const host = env.HOST || '127.0.0.1';
  const smtpUrl = env.SMTP_URL || undefined;
  if (smtpUrl && !/^smtps?:\/\/[^/]+/.test(smtpUrl)) {
    throw new ConfigError('SMTP_URL', 'expected smtp://host[:port] or smtps://host[:port]');
  }
  if (smtpUrl && new URL(smtpUrl).username) {
    throw new ConfigError('SMTP_URL', 'put credentials in SMTP_USER and SMTP_PASSWORD, not in the URL');
  }
  const publicUrl = env.PUBLIC_URL || `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  if (!/^https?:\/\/[^/]+/.test(publicUrl)) {
    throw new ConfigError('PUBLIC_URL', 'expected an http:// or https:// URL');
  }
  const mail: MailConfig = Object.freeze({
    smtpUrl,
    smtpUser: env.SMTP_USER || undefined,
    smtpPassword: env.SMTP_PASSWORD || undefined,
    smtpRequireTls: boolean(env, 'SMTP_REQUIRE_TLS', false),
    smtpTlsRejectUnauthorized: boolean(env, 'SMTP_TLS_REJECT_UNAUTHORIZED', true),
    from: env.MAIL_FROM || 'Exchange <no-reply@exchange.invalid>',
    outboxDir: env.MAIL_OUTBOX_DIR ? path.resolve(cwd, env.MAIL_OUTBOX_DIR) : path.join(dataDir, 'outbox'),
    publicUrl: publicUrl.replace(/\/+$/, ''),
    linkTtlMs: integer(env, 'LINK_TTL_SECONDS', 3600, 60, 604_800) * 1000,
  });
  return Object.freeze({
    port,
    host,
    dataDir,
    storage: Object.freeze(storage),
    referenceFile: env.REFERENCE_FILE ? path.resolve(cwd, env.REFERENCE_FILE) : DEFAULT_REFERENCE_FILE,
    masterKey: Object.freeze(masterKey),
    nonceWindowMs: integer(env, 'NONCE_WINDOW_MS', 300_000, 1_000, 86_400_000),
    bodyLimit: integer(env, 'BODY_LIMIT', 65_536, 1_024, 10_485_760),
    seedDemo: boolean(env, 'SEED_DEMO', storage.kind === 'pglite'),
    logLevel,
    orderPipelineDepth: integer(env, 'ORDER_PIPELINE_DEPTH', 1, 1, 8),
    codeFailureLimits: Object.freeze({
      perAccount: integer(
        env,
        'SVC_CODE_FAILURES_PER_ACCOUNT',
        DEFAULT_FAILURE_LIMITS.perAccount,
        1,
        1_000_000,
      ),
      perAddress: integer(
        env,
        'SVC_CODE_FAILURES_PER_ADDRESS',
        DEFAULT_FAILURE_LIMITS.perAddress,
        1,
        1_000_000,
      ),
      windowMs: integer(
        env,
        'SVC_CODE_FAILURE_WINDOW_MS',
        DEFAULT_FAILURE_LIMITS.windowMs,
        1_000,
        86_400_000,
      ),
    }),
    wallet: walletConfig(env, cwd),
    mail,
    paygate: paygate(env),
  });
}
