import { defaultSecretRefusal, sandboxSecretsForced } from '@platform/default-secrets/default-secrets';
import type { QueryLimits } from '@platform/graphql-limits/limits';
import { parseQueryLimits, QueryLimitSettingError } from '@platform/graphql-limits/settings';
import { settingOr, settingReaders } from '@platform/http-edge/env-settings';
import { dataPath } from '@platform/logging/data-dir';
import { type LogSettings, parseLogSettings } from '@platform/logging/settings';
import { type MetricsSettings, parseMetricsSettings } from '@platform/observability/settings';
import type { IdempotencyBounds } from './idempotency/records.js';
import { parseIdempotencyBounds } from './idempotency/settings.js';

/** The development bearer token accepted for mutations when `BLOG_AUTH_TOKEN` is not set. */
export const DEVELOPMENT_AUTH_TOKEN = 'blog-dev-token';

export interface BlogConfig {
  /** Listening port. @default 4000 */
  readonly port: number;
  /** Listening address. @default '127.0.0.1' */
  readonly host: string;
  /** Directory holding `blog.json`, resolved against the working directory. @default './data/blog-graphql' */
  readonly dataDir: string;
  /** Bearer token required by mutations. @default DEVELOPMENT_AUTH_TOKEN */
  readonly authToken: string;
  /** True when `authToken` is the documented development token (logged as a warning). */
  readonly usingDevelopmentToken: boolean;
  /** BLOG_JOURNAL_COMPACT_BYTES: the journal is folded into blog.json once larger than this (and than blog.json). @default 1048576 */
  readonly journalCompactBytes: number;
  /** Seed the sample content when the data file does not exist yet. @default true */
  readonly seed: boolean;
  /** IDEMPOTENCY_TTL_SECONDS, IDEMPOTENCY_MAX_KEYS, IDEMPOTENCY_MAX_KEYS_PER_CREDENTIAL, IDEMPOTENCY_MAX_BYTES (idempotency/settings.ts) */
  readonly idempotency: IdempotencyBounds;
  /** LOG_LEVEL @default "info"; LOG_FORMAT @default pretty on a terminal, json otherwise */
  readonly log: LogSettings;
  /** QUERY_MAX_DEPTH, QUERY_MAX_BREADTH, QUERY_MAX_COST, QUERY_MAX_TOKENS, QUERY_MAX_DIRECTIVES, REQUEST_MAX_JSON_DEPTH (issue 28; @platform/graphql-limits) */
  readonly queryLimits: QueryLimits;
  /** QUERY_MAX_LIST_ITEMS: list items one request may resolve. @default 10000 */
  readonly maxListItems: number;
  /** The metrics listener: METRICS_HOST @default "127.0.0.1", METRICS_PORT @default 9400 (`0`: any free port, `off`: none) */
  readonly metrics: MetricsSettings;
}

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

/** Settings' errors in this service's words (`NAME must be ...`), through the shared readers. */
const fail = (message: string) => new ConfigError(message);
const { integer, boolean } = settingReaders(fail);

/**
 * The development token is in this repository: whoever reaches the blog could write with it. It
 * serves only on a loopback HOST unless ALLOW_SANDBOX_SECRETS=true (@platform/default-secrets, issue 28).
 */
function refuseDevelopmentToken(env: NodeJS.ProcessEnv, token: string, host: string): void {
  const forced = sandboxSecretsForced(env, (error) => fail(error.message));
  if (token !== DEVELOPMENT_AUTH_TOKEN) return;
  const refusal = defaultSecretRefusal(
    { setting: 'BLOG_AUTH_TOKEN', what: `the development token "${DEVELOPMENT_AUTH_TOKEN}"` },
    { host, databaseUrl: false, forced },
  );
  if (refusal) throw new ConfigError(refusal);
}

/** Reads, validates and freezes the configuration; the only place reading `process.env`. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env, cwd: string = process.cwd()): BlogConfig {
  const token = env['BLOG_AUTH_TOKEN'];
  if (token !== undefined && token.length > 0 && token.length < 8) {
    throw new ConfigError('BLOG_AUTH_TOKEN must be at least 8 characters long');
  }
  const log = parseLogSettings(env, { fail: (setting, detail) => fail(`${setting}: ${detail}`) });
  const host = env['HOST'] || '127.0.0.1';
  refuseDevelopmentToken(env, token || DEVELOPMENT_AUTH_TOKEN, host);
  return Object.freeze({
    port: integer(env, 'PORT', 4000, 0, 65535),
    host,
    dataDir: dataPath(env['BLOG_DATA_DIR'], 'blog-graphql', env, cwd),
    authToken: token || DEVELOPMENT_AUTH_TOKEN,
    usingDevelopmentToken: !token,
    seed: boolean(env, 'BLOG_SEED', true),
    journalCompactBytes: integer(env, 'BLOG_JOURNAL_COMPACT_BYTES', 1024 * 1024, 4096, 1024 * 1024 * 1024),
    idempotency: parseIdempotencyBounds(env, fail),
    log,
    queryLimits: settingOr(
      () => parseQueryLimits(env),
      QueryLimitSettingError,
      (error) => fail(error.message),
    ),
    maxListItems: integer(env, 'QUERY_MAX_LIST_ITEMS', 10_000, 1, 100_000_000),
    metrics: parseMetricsSettings(env, 9400, (setting, detail) => new ConfigError(`${setting}: ${detail}`)),
  });
}
