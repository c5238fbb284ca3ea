import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { defaultSecretRefusal, sandboxSecretsForced } from '@platform/default-secrets/default-secrets';
import type { QueryLimits } from '@platform/graphql-limits/limits';
import { parseQueryLimits, QueryLimitSettingError } from '@platform/graphql-limits/settings';
import { settingOr, settingReaders } from '@platform/http-edge/env-settings';
import { dataPath } from '@platform/logging/data-dir';
import { type LogSettings, parseLogSettings } from '@platform/logging/settings';
import { type MetricsSettings, parseMetricsSettings } from '@platform/observability/settings';
import { FleetSettingError, type FleetSettings, parseFleetSettings } from './fleet/settings.js';

/**
 * Proxy settings. Names and defaults follow part B of the spec, except where noted (`@deviation`).
 * This is the only module that reads `process.env`.
 */

export type GraphQLMode = 'GETMODE' | 'SETMODE' | 'CRUDMODE';

/** The blog's documented development token (services/blog-graphql), used only in embedded mode. */
export const EMBEDDED_BLOG_TOKEN = 'blog-dev-token';
/** @deviation the spec makes the endpoint required; unset means "the local blog upstream". */
export const EMBEDDED_UPSTREAM = 'http://127.0.0.1:4000/graphql';

export interface ProxyConfig {
  /** UPSTREAM_GRAPHQL_ENDPOINT. @default EMBEDDED_UPSTREAM */
  readonly upstreamEndpoint: string;
  /** True when UPSTREAM_GRAPHQL_ENDPOINT was not set (the embedded blog is assumed). */
  readonly embedded: boolean;
  /** AUTH_TOKEN, sent upstream as `Authorization: Bearer <token>`. @default EMBEDDED_BLOG_TOKEN in embedded mode, else unset */
  readonly authToken: string | undefined;
  /**
   * AUTH_TOKEN_FOR_QUERIES: also send AUTH_TOKEN with queries of callers that send no Authorization.
   * Off by default: the spec names the token for mutations, and with it on, anonymous callers would
   * read what the token may read (drafts, private posts). @default false
   */
  readonly authTokenForQueries: boolean;
  /** GRAPHQL_MODE. @default 'GETMODE' */
  readonly mode: GraphQLMode;
  /** PORT. @default 5001 */
  readonly port: number;
  /** HOST. @default '127.0.0.1' */
  readonly host: string;
  /** CACHE_DIR resolved. @default './data/graphql-proxy/cache' */
  readonly cacheDir: string;
  /** QUEUE_DIR resolved. @default './data/graphql-proxy/queue' */
  readonly queueDir: string;
  /** LOCAL_DB_PATH resolved. @default './data/graphql-proxy/local-db.json' */
  readonly localDbPath: string;
  /** CORS_ORIGIN: `*` or a list of origins. @default '*' */
  readonly corsOrigin: '*' | readonly string[];
  /** CACHE_TTL_SECONDS: how long an entry is served without asking upstream. @default 60 */
  readonly cacheTtlMs: number;
  /** CACHE_STALE_IF_ERROR_SECONDS: how old an entry may be when served because upstream failed. @default 604800 (7 days) */
  readonly staleIfErrorMs: number;
  /** CACHE_STALE_WHILE_REVALIDATE_SECONDS: how long after the TTL an entry is still answered at once while it is refreshed in the background (RFC 5861 section 3). @default 60 */
  readonly staleWhileRevalidateMs: number;
  /** BREAKER_FAILURE_THRESHOLD: consecutive upstream failures that open the circuit breaker. @default 1 */
  readonly breakerFailureThreshold: number;
  /** CACHE_TTL_BY_TYPE: `Type=seconds,...`; an answer holding these types lives the smallest of them (unless the upstream sent max-age). @default empty */
  readonly typeTtlsMs: ReadonlyMap<string, number>;
  /** CACHE_SCOPE_CLAIM: scope the cache by this claim of a bearer JWT verified with CACHE_SCOPE_JWT_SECRET. @default unset (scope = hash of the Authorization header) */
  readonly cacheScopeClaim: string | undefined;
  /** CACHE_SCOPE_JWT_SECRET: HMAC secret (HS256/384/512) the tokens are verified with; required with CACHE_SCOPE_CLAIM. */
  readonly cacheScopeJwtSecret: string | undefined;
  /** PERSISTED_QUERIES_MAX_BYTES: automatic persisted queries remembered. @default 8388608 (8 MiB) */
  readonly persistedQueriesMaxBytes: number;
  /** CACHE_MAX_ENTRIES. @default 5000 */
  readonly cacheMaxEntries: number;
  /** CACHE_MAX_BYTES: total size of cached bodies on disk. @default 104857600 (100 MiB) */
  readonly cacheMaxBytes: number;
  /** CACHE_MEMORY_BYTES: bodies also kept in memory for fast hits. @default 33554432 (32 MiB) */
  readonly cacheMemoryBytes: number;
  /** UPSTREAM_TIMEOUT_MS: an upstream slower than this counts as offline. @default 5000 */
  readonly upstreamTimeoutMs: number;
  /** PROBE_INTERVAL_MS: how often the upstream is probed while it is offline or the queue is not empty. @default 5000 */
  readonly probeIntervalMs: number;
  /** RETRY_BASE_MS and RETRY_MAX_MS: replay backoff (doubling from base, capped). @default 1000 and 60000 */
  readonly retryBaseMs: number;
  readonly retryMaxMs: number;
  /** LOCAL_SYNC_ON_START: sync the local database at start. @default true in SETMODE, false otherwise */
  readonly localSyncOnStart: boolean;
  /** QUEUE_OUTCOMES_KEPT: final outcomes of queued mutations kept for `GET /queue/{id}`. @default 10000 */
  readonly queueOutcomesKept: number;
  /** QUEUE_MAX_ITEMS: mutations the queue may hold; more are refused with QUEUE_FULL. @default 10000 */
  readonly queueMaxItems: number;
  /** QUERY_MEMO_BYTES: bytes of parsed documents remembered (the hot path skips parsing for them). @default 16777216 (16 MiB) */
  readonly queryMemoBytes: number;
  /** ADMIN_TOKEN: when set, the management endpoints require `Authorization: Bearer <token>`. @default unset */
  readonly adminToken: string | undefined;
  /** BODY_LIMIT_BYTES. @default 1048576 */
  readonly bodyLimitBytes: number;
  /** LOG_LEVEL @default "info"; LOG_FORMAT @default pretty on a terminal, json otherwise */
  readonly log: LogSettings;
  /** QUERY_MAX_DEPTH, QUERY_MAX_BREADTH, QUERY_MAX_COST, QUERY_MAX_TOKENS, QUERY_MAX_DIRECTIVES, REQUEST_MAX_JSON_DEPTH (issue 28; @platform/graphql-limits) */
  readonly queryLimits: QueryLimits;
  /** CACHE_STORE, QUEUE_STORE, REDIS_* , INSTANCE_ID, QUEUE_LEASE_MS: see fleet/settings.ts. */
  readonly fleet: FleetSettings;
  /** The metrics listener: METRICS_HOST @default "127.0.0.1", METRICS_PORT @default 9501 (`0`: any free port, `off`: none) */
  readonly metrics: MetricsSettings;
}

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

/**
 * The blog's development token is in this repository: with it, the proxy hands anyone who reaches it
 * the blog's write access. It serves only on a loopback HOST unless ALLOW_SANDBOX_SECRETS=true
 * (@platform/default-secrets, issue 28).
 */
function refuseDevelopmentToken(env: NodeJS.ProcessEnv, authToken: string | undefined, host: string): void {
  const forced = sandboxSecretsForced(env, (error) => fail(error.message));
  if (authToken !== EMBEDDED_BLOG_TOKEN) return;
  const refusal = defaultSecretRefusal(
    { setting: 'AUTH_TOKEN', what: `AUTH_TOKEN, the blog's development token "${EMBEDDED_BLOG_TOKEN}",` },
    { host, databaseUrl: false, forced },
  );
  if (refusal) throw new ConfigError(refusal);
}

/** Settings' errors in this service's words (`NAME must be ...`), through the shared readers. */
const fail = (message: string) => new ConfigError(message);
const { integer, boolean } = settingReaders(fail);

/** The package folder (services/graphql-proxy), the base for PATHS_RELATIVE_TO=script. */
const PACKAGE_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

function corsOrigins(raw: string | undefined): '*' | readonly string[] {
  if (raw === undefined || raw.trim() === '' || raw.trim() === '*') return '*';
  const origins = raw
    .split(',')
    .map((origin) => origin.trim())
    .filter((origin) => origin.length > 0);
  for (const origin of origins) {
    let parsed: URL;
    try {
      parsed = new URL(origin);
    } catch {
      throw new ConfigError(
        `CORS_ORIGIN contains "${origin}", which is not an origin such as https://blog.example`,
      );
    }
    if (parsed.origin !== origin.replace(/\/$/, '')) {
      throw new ConfigError(
        `CORS_ORIGIN entry "${origin}" must be an origin (scheme://host[:port]) without a path`,
      );
    }
  }
  return Object.freeze(origins.map((origin) => origin.replace(/\/$/, '')));
}

/** 127.0.0.0/8, ::1 and localhost: addresses other machines cannot reach. */
export function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127(\.\d{1,3}){3}$/.test(host);
}

function typeTtls(raw: string | undefined): ReadonlyMap<string, number> {
  const ttls = new Map<string, number>();
  if (raw === undefined || raw.trim() === '') return ttls;
  for (const part of raw.split(',')) {
    const match = /^\s*([A-Za-z_]\w*)\s*=\s*(\d+)\s*$/.exec(part);
    if (!match) {
      throw new ConfigError(`CACHE_TTL_BY_TYPE must be Type=seconds[,Type=seconds...], got "${part.trim()}"`);
    }
    ttls.set(match[1] as string, Number(match[2]) * 1000);
  }
  return ttls;
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env, cwd: string = process.cwd()): ProxyConfig {
  const endpointRaw = env['UPSTREAM_GRAPHQL_ENDPOINT'];
  const embedded = endpointRaw === undefined || endpointRaw === '';
  const upstreamEndpoint = embedded ? EMBEDDED_UPSTREAM : endpointRaw;
  let parsed: URL;
  try {
    parsed = new URL(upstreamEndpoint);
  } catch {
    throw new ConfigError(`UPSTREAM_GRAPHQL_ENDPOINT must be an http(s) URL, got "${upstreamEndpoint}"`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new ConfigError(`UPSTREAM_GRAPHQL_ENDPOINT must use http or https, got "${parsed.protocol}"`);
  }
  const modeRaw = (env['GRAPHQL_MODE'] || 'GETMODE').toUpperCase();
  if (modeRaw !== 'GETMODE' && modeRaw !== 'SETMODE' && modeRaw !== 'CRUDMODE') {
    throw new ConfigError(`GRAPHQL_MODE must be GETMODE, SETMODE or CRUDMODE, got "${env['GRAPHQL_MODE']}"`);
  }
  const relativeTo = env['PATHS_RELATIVE_TO'] || 'cwd';
  if (relativeTo !== 'cwd' && relativeTo !== 'script') {
    throw new ConfigError(`PATHS_RELATIVE_TO must be cwd or script, got "${relativeTo}"`);
  }
  const base = env['PATHS_BASE_DIR']
    ? path.resolve(cwd, env['PATHS_BASE_DIR'])
    : relativeTo === 'script'
      ? PACKAGE_DIR
      : cwd;
  // With neither PATHS_BASE_DIR nor PATHS_RELATIVE_TO=script, the platform's one data-folder rule
  // (`@platform/logging/data-dir`): defaults under the repository's ./data whatever the working folder.
  const explicitBase = Boolean(env['PATHS_BASE_DIR']) || relativeTo === 'script';
  const resolvePath = (name: string, fallback: string) =>
    explicitBase
      ? path.resolve(base, env[name] || fallback)
      : dataPath(env[name], fallback.replace(/^\.\/data\//, ''), env, cwd);
  const log = parseLogSettings(env, { fail: (setting, detail) => fail(`${setting}: ${detail}`) });
  const retryBaseMs = integer(env, 'RETRY_BASE_MS', 1000, 10, 3_600_000);
  const retryMaxMs = integer(env, 'RETRY_MAX_MS', 60_000, 10, 86_400_000);
  if (retryMaxMs < retryBaseMs) throw new ConfigError('RETRY_MAX_MS must not be smaller than RETRY_BASE_MS');
  const authToken = env['AUTH_TOKEN'] ? env['AUTH_TOKEN'] : embedded ? EMBEDDED_BLOG_TOKEN : undefined;
  const host = env['HOST'] || '127.0.0.1';
  const adminToken = env['ADMIN_TOKEN'] || undefined;
  if (!isLoopback(host) && adminToken === undefined) {
    throw new ConfigError(
      `ADMIN_TOKEN is required when HOST (${host}) is not a loopback address: the management API ` +
        '(/queue, /flush, /local/*, /cache/*) would otherwise be open to the network',
    );
  }
  if (adminToken !== undefined && adminToken.length < 16) {
    throw new ConfigError('ADMIN_TOKEN must be at least 16 characters');
  }
  refuseDevelopmentToken(env, authToken, host);
  const cacheScopeClaim = env['CACHE_SCOPE_CLAIM'] || undefined;
  const cacheScopeJwtSecret = env['CACHE_SCOPE_JWT_SECRET'] || undefined;
  if (
    cacheScopeClaim !== undefined &&
    (cacheScopeJwtSecret === undefined || cacheScopeJwtSecret.length < 16)
  ) {
    throw new ConfigError(
      "CACHE_SCOPE_CLAIM needs CACHE_SCOPE_JWT_SECRET (at least 16 characters): an unverified claim would let anyone read another user's cached answers",
    );
  }
  return Object.freeze({
    upstreamEndpoint,
    embedded,
    authToken,
    mode: modeRaw,
    authTokenForQueries: boolean(env, 'AUTH_TOKEN_FOR_QUERIES', false),
    port: integer(env, 'PORT', 5001, 0, 65535),
    host,
    cacheDir: resolvePath('CACHE_DIR', './data/graphql-proxy/cache'),
    queueDir: resolvePath('QUEUE_DIR', './data/graphql-proxy/queue'),
    localDbPath: resolvePath('LOCAL_DB_PATH', './data/graphql-proxy/local-db.json'),
    corsOrigin: corsOrigins(env['CORS_ORIGIN']),
    cacheTtlMs: integer(env, 'CACHE_TTL_SECONDS', 60, 0, 365 * 86_400) * 1000,
    staleIfErrorMs: integer(env, 'CACHE_STALE_IF_ERROR_SECONDS', 7 * 86_400, 0, 10 * 365 * 86_400) * 1000,
    staleWhileRevalidateMs: integer(env, 'CACHE_STALE_WHILE_REVALIDATE_SECONDS', 60, 0, 365 * 86_400) * 1000,
    breakerFailureThreshold: integer(env, 'BREAKER_FAILURE_THRESHOLD', 1, 1, 1000),
    typeTtlsMs: typeTtls(env['CACHE_TTL_BY_TYPE']),
    cacheScopeClaim,
    cacheScopeJwtSecret,
    persistedQueriesMaxBytes: integer(
      env,
      'PERSISTED_QUERIES_MAX_BYTES',
      8 * 1024 * 1024,
      0,
      Number.MAX_SAFE_INTEGER,
    ),
    cacheMaxEntries: integer(env, 'CACHE_MAX_ENTRIES', 5000, 1, 10_000_000),
    cacheMaxBytes: integer(env, 'CACHE_MAX_BYTES', 100 * 1024 * 1024, 1024, Number.MAX_SAFE_INTEGER),
    cacheMemoryBytes: integer(env, 'CACHE_MEMORY_BYTES', 32 * 1024 * 1024, 0, Number.MAX_SAFE_INTEGER),
    upstreamTimeoutMs: integer(env, 'UPSTREAM_TIMEOUT_MS', 5000, 50, 600_000),
    probeIntervalMs: integer(env, 'PROBE_INTERVAL_MS', 5000, 50, 3_600_000),
    retryBaseMs,
    retryMaxMs,
    localSyncOnStart: boolean(env, 'LOCAL_SYNC_ON_START', modeRaw === 'SETMODE'),
    queueMaxItems: integer(env, 'QUEUE_MAX_ITEMS', 10_000, 1, 10_000_000),
    queryMemoBytes: integer(env, 'QUERY_MEMO_BYTES', 16 * 1024 * 1024, 0, Number.MAX_SAFE_INTEGER),
    queueOutcomesKept: integer(env, 'QUEUE_OUTCOMES_KEPT', 10_000, 1, 10_000_000),
    adminToken,
    bodyLimitBytes: integer(env, 'BODY_LIMIT_BYTES', 1_048_576, 1024, 100 * 1_048_576),
    log,
    queryLimits: settingOr(
      () => parseQueryLimits(env),
      QueryLimitSettingError,
      (error) => fail(error.message),
    ),
    fleet: settingOr(
      () => parseFleetSettings(env),
      FleetSettingError,
      (error) => fail(error.message),
    ),
    metrics: parseMetricsSettings(env, 9501, (setting, detail) => new ConfigError(`${setting}: ${detail}`)),
  });
}
