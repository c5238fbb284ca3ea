import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { storageSetting } from '@platform/http-edge/env-settings';
import { dataPath } from '@platform/logging/data-dir';
import { type LogSettings, parseLogSettings } from '@platform/logging/settings';
import { type MetricsSettings, parseMetricsSettings } from '@platform/observability/settings';
import type { StorageConfig } from '@platform/sql-storage/open';
import { type CancelAfterConfig, cancelAfterConfig } from './cancel-all/config.js';
import { type ClusterConfig, clusterConfig } from './cluster/config.js';
import { codeFailureLimitsConfig } from './codes/config.js';
import type { FailureLimits } from './codes/limits.js';
import { type MasterKeySource, parseMasterKey } from './crypto/config.js';
import { type FeedConfig, feedConfig } from './feed/config.js';
import { type PaygateConfig, paygateConfig, refuseSandboxPaygateSecret } from './fiat/config.js';
import { trustedProxies } from './http/config.js';
import { type ReconcileScheduleConfig, reconcileScheduleConfig } from './ledger/config.js';
import { type RequestLimitsConfig, requestLimitsConfig } from './limits/config.js';
import { isLoopbackHost } from './loopback.js';
import { type MailConfig, mailConfig } from './mail/config.js';
import { boolean, ConfigError, integer } from './settings/parse.js';
import { type BookSnapshotConfig, bookSnapshotConfig } from './snapshots/config.js';
import { type WalletConfig, walletConfig } from './wallet/config.js';
import { type WithdrawAddressConfig, withdrawAddressConfig } from './withdraw-addresses/config.js';

export { type MasterKeySource, parseMasterKey } from './crypto/config.js';
export { defaultFeedConfig, type FeedConfig } from './feed/config.js';
export {
  DEFAULT_PAYGATE_PUBLIC_KEYS,
  defaultPaygateConfig,
  type PaygateConfig,
  SANDBOX_MERCHANT_SECRET,
} from './fiat/config.js';
export { DEFAULT_LIMITS_FILE, type RequestLimitsConfig } from './limits/config.js';
export type { MailConfig } from './mail/config.js';
// The settings of each feature live in its folder (<feature>/config.ts); this module reads the
// environment once and composes them. The re-exports keep the one import path of every setting type.
export { ConfigError } from './settings/parse.js';
export type { BookSnapshotConfig } from './snapshots/config.js';
export type { NodeCustodyConfig, WalletConfig } from './wallet/config.js';

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
  /** The metrics listener: `METRICS_HOST` @default "127.0.0.1", `METRICS_PORT` @default 9100 (`0`: any free port, `off`: none) */
  readonly metrics: MetricsSettings;
  /**
   * Order batch statements in flight at once: with 2 or more, the next batch is computed and sent
   * while the previous one commits (src/orders/pipeline.ts). @default 1 (`ORDER_PIPELINE_DEPTH`, 1..8)
   */
  readonly orderPipelineDepth: number;
  /** Durable book snapshots (src/snapshots/). */
  readonly bookSnapshots: BookSnapshotConfig;
  /** The periodic ledger reconciliation (src/ledger/config.ts). @default every hour (`RECONCILE_INTERVAL_MS`) */
  readonly reconcile: ReconcileScheduleConfig;
  /**
   * Failed transfer-code redemptions allowed per account and per client address within one window.
   * @default 10, 30, 900000 ms (`SVC_CODE_FAILURES_PER_ACCOUNT`, `SVC_CODE_FAILURES_PER_ADDRESS`, `SVC_CODE_FAILURE_WINDOW_MS`)
   */
  readonly codeFailureLimits: FailureLimits;
  /** Crypto deposits and withdrawals (issue 14). */
  readonly wallet: WalletConfig;
  /** The withdrawal address book (src/withdraw-addresses/). @default lock 86400 s (`WITHDRAW_ADDRESS_LOCK_S`) */
  readonly withdrawAddresses: WithdrawAddressConfig;
  /** The dead-man's switch scheduler (src/cancel-all/). @default `CANCEL_AFTER_CHECK_MS` 200, `CANCEL_AFTER_CLAIM_MS` 5000 */
  readonly cancelAfter: CancelAfterConfig;
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
  /** This process is a node of a cluster (`NODE_ID`, `NODE_URL`, src/cluster/config.ts). @default none: one process */
  readonly cluster: ClusterConfig | undefined;
}

export const DEFAULT_REFERENCE_FILE = fileURLToPath(new URL('../config/reference.yaml', import.meta.url));

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
  const storage: StorageConfig = storageSetting(env, dataDir);
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
  const log = parseLogSettings(env, { fail: (setting, detail) => new ConfigError(setting, detail) });
  const host = env.HOST || '127.0.0.1';
  const mail = mailConfig(env, cwd, dataDir, host, port);
  const paygateSettings = paygateConfig(env);
  refuseSandboxPaygateSecret(env, host, paygateSettings);
  const cluster = clusterConfig(env, storage.kind);
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
    metrics: parseMetricsSettings(env, 9100, (setting, detail) => new ConfigError(setting, detail)),
    orderPipelineDepth: integer(env, 'ORDER_PIPELINE_DEPTH', 1, 1, 8),
    bookSnapshots: bookSnapshotConfig(env),
    reconcile: reconcileScheduleConfig(env),
    codeFailureLimits: codeFailureLimitsConfig(env),
    wallet: walletConfig(env, cwd),
    withdrawAddresses: withdrawAddressConfig(env),
    cancelAfter: cancelAfterConfig(env),
    mail,
    paygate: paygateSettings,
    feed: feedConfig(env),
    limits: requestLimitsConfig(env, cwd, storage.kind, cluster !== undefined),
    trustedProxies: trustedProxies(env),
    cluster,
  });
}
