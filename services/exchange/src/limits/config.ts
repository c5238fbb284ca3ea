import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { boolean, ConfigError, integer } from '../settings/parse.js';
import { parseLimits } from './limits-file.js';
import type { FailureMode } from './register.js';
import type { LimitsConfig } from './rules.js';

/** Request limits (src/limits/). */
export interface RequestLimitsConfig {
  /** @default true (`RATE_LIMITS_ENABLED`) */
  readonly enabled: boolean;
  /** @default the bundled `config/limits.yaml` (`RATE_LIMITS_FILE`) */
  readonly file: string;
  /** The rules of that file. */
  readonly rules: LimitsConfig;
  /**
   * Where the counters live without `RATELIMIT_GRPC_URL`: `database` (shared by every process on the
   * database, so a cluster's nodes count together) or `memory` (this process only). One process
   * counts every request itself, so without `NODE_ID` the database's counters would only add a
   * statement (and its round trip) to each limited request: 0.29x the in-process limiter's rate on
   * one connection in `bench:limits` (README "Request limits").
   * @default 'database' for a cluster node (`NODE_ID`) on PostgreSQL, 'memory' otherwise (`RATE_LIMITS_STORE`)
   */
  readonly store: 'database' | 'memory';
  /** services/ratelimit gRPC target; unset: `store` decides. @default unset (`RATELIMIT_GRPC_URL`) */
  readonly grpcTarget: string | undefined;
  /** Deadline of one call to services/ratelimit. @default 100 (`RATELIMIT_TIMEOUT_MS`, 1..60000) */
  readonly timeoutMs: number;
  /** When services/ratelimit fails or times out. @default 'open' (`RATELIMIT_FAILURE_MODE`) */
  readonly failureMode: FailureMode;
}

export const DEFAULT_LIMITS_FILE = fileURLToPath(new URL('../../config/limits.yaml', import.meta.url));

export function requestLimitsConfig(
  env: NodeJS.ProcessEnv,
  cwd: string,
  storageKind: 'postgres' | 'pglite',
  /** This process is a node of a cluster (`NODE_ID` set): its nodes must count together. */
  clusterNode: boolean,
): RequestLimitsConfig {
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
  const store = env.RATE_LIMITS_STORE || (storageKind === 'postgres' && clusterNode ? 'database' : 'memory');
  if (store !== 'database' && store !== 'memory') {
    throw new ConfigError('RATE_LIMITS_STORE', `expected database or memory, got "${store}"`);
  }
  return Object.freeze({
    enabled: boolean(env, 'RATE_LIMITS_ENABLED', true),
    file,
    store,
    rules: parsed.config,
    grpcTarget: target,
    timeoutMs: integer(env, 'RATELIMIT_TIMEOUT_MS', 100, 1, 60_000),
    failureMode: mode,
  });
}
