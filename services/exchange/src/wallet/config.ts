import path from 'node:path';
import { boolean, ConfigError, integer } from '../settings/parse.js';

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

/** The wallet settings (`env` is the environment the top-level config read). */
export function walletConfig(env: NodeJS.ProcessEnv, cwd: string): WalletConfig {
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
