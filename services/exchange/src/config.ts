import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { dataPath } from '@platform/logging/data-dir';
import { LogSettingError, type LogSettings, parseLogSettings } from '@platform/logging/settings';
import type { StorageConfig } from '@platform/sql-storage/open';
import { DEFAULT_FAILURE_LIMITS, type FailureLimits } from './codes/limits.js';
import { parseLimits } from './limits/limits-file.js';
import type { FailureMode } from './limits/register.js';
import type { LimitsConfig } from './limits/rules.js';
import { isLoopbackHost } from './loopback.js';

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
  /**
   * True when `PUBLIC_URL` is unset: the links then follow the address the server listens on, so
   * with `PORT=0` they carry the port the system gave, not `:0`. @default true
   */
  readonly publicUrlFromListener: boolean;
  /** How long a confirm/cancel link works. @default 3600000 (`LINK_TTL_SECONDS`=3600, 60..604800) */
  readonly linkTtlMs: number;
}

export interface Config {
  /** @default 3100 (`PORT`) */
  readonly port: number;
  /** @default '127.0.0.1' (`HOST`) */
  readonly host: string;
  /** `DATA_DIR` @default '<repository root>/data/exchange' (`@platform/logging/data-dir` says the rule) */
  readonly dataDir: string;
  readonly storage: StorageConfig;
  /** YAML file with currencies, markets, fees and reference rates. @default the bundled `config/reference.yaml` */
  readonly referenceFile: string;
  readonly masterKey: MasterKeySource;
  /** Largest accepted difference between a nonce (ms) and server time. @default 300000 (`NONCE_WINDOW_MS`) */
  readonly nonceWindowMs: number;
  /** Largest accepted request body in bytes. @default 65536 (`BODY_LIMIT`) */
  readonly bodyLimit: number;
  /**
   * Seed the demo account and write `<dataDir>/demo-api-key.json`. Refused with a `HOST` that is not
   * loopback unless `SEED_DEMO_FORCE=true`. @default true only with the embedded database on a loopback `HOST` (`SEED_DEMO`)
   */
  readonly seedDemo: boolean;
  /** `LOG_LEVEL` @default "info"; `LOG_FORMAT` @default pretty on a terminal, json otherwise */
  readonly log: LogSettings;
  /**
   * Order batch statements in flight at once: with 2 or more, the next batch is computed and sent
   * while the previous one commits (src/orders/pipeline.ts). @default 1 (`ORDER_PIPELINE_DEPTH`, 1..8)
   */
  readonly orderPipelineDepth: number;
  /** Durable book snapshots (src/snapshots/). */
  readonly bookSnapshots: BookSnapshotConfig;
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
  /** The live WebSocket feed (src/feed/). */
  readonly feed: FeedConfig;
  /** Request limits (src/limits/, README "Request limits"). */
  readonly limits: RequestLimitsConfig;
  /**
   * Proxies whose `X-Forwarded-For` gives the client address (Fastify `trustProxy`): addresses, CIDRs
   * or `loopback`, `linklocal`, `uniquelocal`. @default none: the socket address (`TRUSTED_PROXIES`)
   */
  readonly trustedProxies: readonly string[];
}

/** The live WebSocket feed at `/v3/ws` (src/feed/, docs/feed.md). */
export interface FeedConfig {
  /** Serve the feed (and keep its books up to date with every batch). @default true (`FEED_ENABLED`) */
  readonly enabled: boolean;
  /** Open feed connections at once; one more is refused with 503 before the upgrade. @default 10000 (`FEED_MAX_CONNECTIONS`) */
  readonly maxConnections: number;
  /**
   * Open feed connections at once from one client address (the request's `ip`); one more is refused
   * with 429 rate_limited before the upgrade. @default 100 (`FEED_MAX_CONNECTIONS_PER_ADDRESS`)
   */
  readonly maxConnectionsPerAddress: number;
  /**
   * How often the API keys of authenticated connections are checked; a key disabled or revoked since
   * its `auth` loses its private channels at the next check. @default 5000 (`FEED_KEY_CHECK_INTERVAL_MS`)
   */
  readonly keyCheckIntervalMs: number;
  /** Subscriptions one connection may hold. @default 50 (`FEED_MAX_SUBSCRIPTIONS`) */
  readonly maxSubscriptions: number;
  /** Largest client frame in bytes; a larger one closes the connection with 1009. @default 4096 (`FEED_MAX_FRAME_BYTES`) */
  readonly maxFrameBytes: number;
  /** Bytes queued for a client beyond which it is dropped as a slow consumer (4008). @default 1048576 (`FEED_MAX_BUFFERED_BYTES`) */
  readonly maxBufferedBytes: number;
  /** Sustained client frames per second; above it the connection is closed with 1008. @default 10 (`FEED_MESSAGES_PER_SECOND`) */
  readonly messagesPerSecond: number;
  /** Client frames allowed at once before the rate applies. @default 50 (`FEED_MESSAGE_BURST`) */
  readonly messageBurst: number;
  /** Shortest interval between two ticker frames of a market. @default 1000 (`FEED_TICKER_INTERVAL_MS`) */
  readonly tickerIntervalMs: number;
}

function feed(env: NodeJS.ProcessEnv): FeedConfig {
  return Object.freeze({
    enabled: boolean(env, 'FEED_ENABLED', true),
    maxConnections: integer(env, 'FEED_MAX_CONNECTIONS', 10_000, 1, 1_000_000),
    maxConnectionsPerAddress: integer(env, 'FEED_MAX_CONNECTIONS_PER_ADDRESS', 100, 1, 1_000_000),
    keyCheckIntervalMs: integer(env, 'FEED_KEY_CHECK_INTERVAL_MS', 5_000, 20, 3_600_000),
    maxSubscriptions: integer(env, 'FEED_MAX_SUBSCRIPTIONS', 50, 1, 10_000),
    maxFrameBytes: integer(env, 'FEED_MAX_FRAME_BYTES', 4_096, 256, 1_048_576),
    maxBufferedBytes: integer(env, 'FEED_MAX_BUFFERED_BYTES', 1_048_576, 16_384, 1_073_741_824),
    messagesPerSecond: integer(env, 'FEED_MESSAGES_PER_SECOND', 10, 1, 100_000),
    messageBurst: integer(env, 'FEED_MESSAGE_BURST', 50, 1, 100_000),
    tickerIntervalMs: integer(env, 'FEED_TICKER_INTERVAL_MS', 1_000, 50, 3_600_000),
  });
}

/** The feed settings with every default (tests and in-process apps). */
export function defaultFeedConfig(): FeedConfig {
  return feed({});
}

/** Request limits (src/limits/). */
export interface RequestLimitsConfig {
  /** @default true (`RATE_LIMITS_ENABLED`) */
  readonly enabled: boolean;
  /** @default the bundled `config/limits.yaml` (`RATE_LIMITS_FILE`) */
  readonly file: string;
  /** The rules of that file. */
  readonly rules: LimitsConfig;
  /** services/ratelimit gRPC target; unset: the in-process limiter. @default unset (`RATELIMIT_GRPC_URL`) */
  readonly grpcTarget: string | undefined;
  /** Deadline of one call to services/ratelimit. @default 100 (`RATELIMIT_TIMEOUT_MS`, 1..60000) */
  readonly timeoutMs: number;
  /** When services/ratelimit fails or times out. @default 'open' (`RATELIMIT_FAILURE_MODE`) */
  readonly failureMode: FailureMode;
}

export const DEFAULT_LIMITS_FILE = fileURLToPath(new URL('../config/limits.yaml', import.meta.url));

/** Durable snapshots of the order books, so a restart replays only the commands after the newest. */
export interface BookSnapshotConfig {
  /**
   * Committed commands of a market between two snapshots of its book (also the in-memory checkpoint
   * interval); 0 turns snapshots off: none written, none read, every start replays the whole log.
   * @default 50000 (`BOOK_SNAPSHOT_EVERY`, 0..10000000)
   */
  readonly every: number;
  /** Snapshots kept per market, the newest; older ones are the fallback. @default 2 (`BOOK_SNAPSHOT_KEEP`, 2..10) */
  readonly keep: number;
  /**
   * Every this many ms, a market whose writer is idle and has committed commands since its last
   * snapshot gets one; 0: only every `every` commands (and at graceful shutdown).
   * @default 60000 (`BOOK_SNAPSHOT_INTERVAL_MS`, 0..86400000)
   */
  readonly intervalMs: number;
  /** Test-only fail point, see src/snapshots/book-snapshots.ts. @default none (`EXCHANGE_FAILPOINT`) */
  readonly failpoint: string | undefined;
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

function logSettings(env: NodeJS.ProcessEnv): LogSettings {
  try {
    return parseLogSettings(env);
  } catch (error) {
    if (error instanceof LogSettingError) throw new ConfigError(error.setting, error.detail);
    throw error;
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

function bookSnapshotConfig(env: NodeJS.ProcessEnv): BookSnapshotConfig {
  return Object.freeze({
    every: integer(env, 'BOOK_SNAPSHOT_EVERY', 50_000, 0, 10_000_000),
    keep: integer(env, 'BOOK_SNAPSHOT_KEEP', 2, 2, 10),
    intervalMs: integer(env, 'BOOK_SNAPSHOT_INTERVAL_MS', 60_000, 0, 86_400_000),
    failpoint: env.EXCHANGE_FAILPOINT || undefined,
  });
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

function requestLimits(env: NodeJS.ProcessEnv, cwd: string): RequestLimitsConfig {
  const file = env.RATE_LIMITS_FILE ? path.resolve(cwd, env.RATE_LIMITS_FILE) : DEFAULT_LIMITS_FILE;
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new ConfigError('RATE_LIMITS_FILE', `cannot read ${file}: ${(error as Error).message}`);
  }
  const parsed = parseLimits(text);
  if (!parsed.ok) throw new ConfigError('RATE_LIMITS_FILE', `${file}: ${parsed.error}`);
  // grpc-js targets: host:port, dns:///host:port, unix:/path; a grpc:// prefix is accepted and dropped.
  const target = env.RATELIMIT_GRPC_URL?.trim().replace(/^grpc:\/\//, '') || undefined;
  if (target && !/^(dns:\/\/\/|ipv4:|ipv6:)?[^\s/]+:\d{1,5}$|^unix:\S+$/.test(target)) {
    throw new ConfigError(
      'RATELIMIT_GRPC_URL',
      `expected host:port (or dns:///host:port, unix:/path), got "${target}"`,
    );
  }
  const mode = env.RATELIMIT_FAILURE_MODE || 'open';
  if (mode !== 'open' && mode !== 'closed') {
    throw new ConfigError('RATELIMIT_FAILURE_MODE', `expected open or closed, got "${mode}"`);
  }
  return Object.freeze({
    enabled: boolean(env, 'RATE_LIMITS_ENABLED', true),
    file,
    rules: parsed.config,
    grpcTarget: target,
    timeoutMs: integer(env, 'RATELIMIT_TIMEOUT_MS', 100, 1, 60_000),
    failureMode: mode,
  });
}

/** `TRUSTED_PROXIES`: addresses, CIDRs and proxy-addr's names, checked here so a typo stops the start. */
function trustedProxies(env: NodeJS.ProcessEnv): readonly string[] {
  const items = (env.TRUSTED_PROXIES ?? '')
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean);
  for (const item of items) {
    if (['loopback', 'linklocal', 'uniquelocal'].includes(item)) continue;
    const [address, bits, extra] = item.split('/');
    const family = isIP(address ?? '');
    const bitsOk =
      bits === undefined || (/^\d{1,3}$/.test(bits) && Number(bits) <= (family === 6 ? 128 : 32));
    if (family === 0 || !bitsOk || extra !== undefined) {
      throw new ConfigError(
        'TRUSTED_PROXIES',
        `expected addresses or CIDRs (or loopback, linklocal, uniquelocal), got "${item}"`,
      );
    }
  }
  return Object.freeze(items);
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
 * Whether to create the demo account. It is funded, may withdraw, and its secret is printed in the
 * log, so it must not exist on a service others can reach: with a `HOST` that is not loopback it is
 * off by default and `SEED_DEMO=true` is refused unless `SEED_DEMO_FORCE=true` says it is meant.
 */
function demoSeedingOf(env: NodeJS.ProcessEnv, host: string, storageKind: StorageConfig['kind']): boolean {
  const loopback = isLoopbackHost(host);
  const forced = boolean(env, 'SEED_DEMO_FORCE', false);
  const seed = boolean(env, 'SEED_DEMO', storageKind === 'pglite' && loopback);
  if (seed && !loopback && !forced) {
    throw new ConfigError(
      'SEED_DEMO',
      `refused with HOST=${host}, which is not a loopback address: the demo account is funded and its secret is logged; set SEED_DEMO_FORCE=true to seed it anyway`,
    );
  }
  return seed;
}

/** Reads the configuration from the environment once; fails fast naming the wrong setting. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env, cwd = process.cwd()): Config {
  const dataDir = dataPath(env.DATA_DIR, 'exchange', env, cwd);
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
  const log = logSettings(env);
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
    publicUrlFromListener: !env.PUBLIC_URL,
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
    seedDemo: demoSeedingOf(env, host, storage.kind),
    log,
    orderPipelineDepth: integer(env, 'ORDER_PIPELINE_DEPTH', 1, 1, 8),
    bookSnapshots: bookSnapshotConfig(env),
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
    feed: feed(env),
    limits: requestLimits(env, cwd),
    trustedProxies: trustedProxies(env),
  });
}
