/**
 * The only module that reads `process.env`. Settings are parsed once, validated, frozen; a wrong
 * value stops start-up with a message naming the setting. Every setting and its default is listed in
 * the README.
 */
import { resolve } from 'node:path';
import { defaultSecretRefusal, sandboxSecretsForced } from '@platform/default-secrets/default-secrets';
import { dataPath } from '@platform/logging/data-dir';
import { type LogSettings, parseLogSettings } from '@platform/logging/settings';
import { type MetricsSettings, parseMetricsSettings } from '@platform/observability/settings';
import type { CalendarSettings } from './calendar/routes.js';
import { parseWebhookSettings, type WebhookSettings } from './webhooks/settings.js';

export type AuthConfig =
  /** HMAC (HS256/384/512) with a shared secret. */
  | { kind: 'hmac'; secret: string }
  /** Public keys fetched from a JWKS URL (RS*, PS*, ES*, EdDSA). */
  | { kind: 'jwks'; url: string }
  /** Neither configured: a development secret generated once into this file (see README). */
  | { kind: 'dev-secret-file'; file: string };

export interface JwtConfig {
  auth: AuthConfig;
  /** `JWT_ISSUER`: required `iss` when set. @default unset (not checked) */
  issuer?: string;
  /** `JWT_AUDIENCE`: required `aud` when set. @default unset (not checked) */
  audience?: string;
  /** `JWT_CLOCK_TOLERANCE_SECONDS`: skew allowed on `exp`/`nbf`/`iat`. @default 30 */
  clockToleranceSeconds: number;
  /** `JWT_MEMBER_CLAIM`: claim that, when `true`, makes the caller a member. @default "member" */
  memberClaim: string;
  /** `JWT_REQUIRE_EXP`: refuse tokens without `exp` (a token that never expires). @default true */
  requireExp: boolean;
}

export type StorageConfig =
  | { kind: 'postgres'; url: string; poolMax: number }
  | { kind: 'pglite'; dir: string };

export interface Config {
  /**
   * `HOST` @default "127.0.0.1" (was 0.0.0.0: with the development JWT secret, the default, the
   * service must not be reachable from other machines; set HOST with JWT_SECRET or JWT_JWKS_URL)
   */
  host: string;
  /** `PORT` @default 3300 */
  port: number;
  /** `BASE_PATH`: prefix of the event routes, e.g. `/api`. @default "" (none) */
  basePath: string;
  storage: StorageConfig;
  jwt: JwtConfig;
  /** `BODY_LIMIT_BYTES`: larger request bodies get 413. @default 524288 */
  bodyLimitBytes: number;
  /** `READ_CACHE_MAX_ENTRIES`: in-memory read cache size; 0 disables it. @default 5000 */
  readCacheMaxEntries: number;
  /** `LOG_LEVEL` @default "info"; `LOG_FORMAT` @default pretty on a terminal, json otherwise */
  log: LogSettings;
  /** The metrics listener: `METRICS_HOST` @default "127.0.0.1", `METRICS_PORT` @default 9300 (`0`: any free port, `off`: none) */
  metrics: MetricsSettings;
  /** `SHUTDOWN_TIMEOUT_MS`: in-flight requests get this long on SIGTERM. @default 10000 */
  shutdownTimeoutMs: number;
  /** `CORS_ORIGIN`: `*` or a comma-separated list of origins allowed to call from a browser. @default "*" */
  corsOrigin: '*' | readonly string[];
  /** Sync, calendar feeds and webhooks (issue 45). */
  features: FeatureSettings;
}

export interface FeatureSettings {
  /** `SYNC_RETENTION`: seconds sync tokens stay usable and changes stay in the log. @default 2592000 (30 days) */
  syncRetentionSeconds: number;
  calendar: CalendarSettings;
  webhooks: WebhookSettings;
  /** `PUBLIC_URL`: origin of the calendar feed URLs answered. @default unset: the request's own origin */
  publicUrl: string | undefined;
}

export class ConfigError extends Error {
  constructor(setting: string, problem: string) {
    super(`Invalid setting ${setting}: ${problem}`);
    this.name = 'ConfigError';
  }
}

type Env = Readonly<Record<string, string | undefined>>;

function text(env: Env, name: string): string | undefined {
  const value = env[name]?.trim();
  return value === undefined || value === '' ? undefined : value;
}

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = text(env, name);
  if (raw === undefined) return fallback;
  if (!/^\d+$/.test(raw)) throw new ConfigError(name, `expected an integer, got "${raw}"`);
  const value = Number(raw);
  if (value < min || value > max) throw new ConfigError(name, `expected ${min}-${max}, got ${value}`);
  return value;
}

function url(env: Env, name: string, protocols: readonly string[]): string | undefined {
  const raw = text(env, name);
  if (raw === undefined) return undefined;
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw new ConfigError(name, 'not a valid URL');
  }
  if (!protocols.includes(parsed.protocol)) {
    throw new ConfigError(name, `expected a ${protocols.join(' or ')} URL`);
  }
  return raw;
}

function boolean(env: Env, name: string, fallback: boolean): boolean {
  const raw = text(env, name)?.toLowerCase();
  if (raw === undefined) return fallback;
  if (['true', '1', 'yes', 'on'].includes(raw)) return true;
  if (['false', '0', 'no', 'off'].includes(raw)) return false;
  throw new ConfigError(name, `expected true or false, got "${raw}"`);
}

/** `*`, or origins such as `https://app.example` (scheme, host, optional port; no path). */
function corsOrigin(env: Env): '*' | readonly string[] {
  const raw = text(env, 'CORS_ORIGIN');
  if (raw === undefined || raw === '*') return '*';
  const origins = raw
    .split(',')
    .map((origin) => origin.trim().replace(/\/$/, ''))
    .filter((origin) => origin.length > 0);
  for (const origin of origins) {
    let parsed: URL | undefined;
    try {
      parsed = new URL(origin);
    } catch {
      parsed = undefined;
    }
    if (parsed === undefined || parsed.origin !== origin) {
      throw new ConfigError('CORS_ORIGIN', `"${origin}" is not an origin such as https://app.example`);
    }
  }
  return Object.freeze(origins);
}

function basePath(env: Env): string {
  const raw = text(env, 'BASE_PATH');
  if (raw === undefined || raw === '/') return '';
  const trimmed = raw.replace(/\/+$/, '');
  if (!/^(\/[A-Za-z0-9._~-]+)+$/.test(trimmed)) {
    throw new ConfigError('BASE_PATH', 'expected a path such as /api or /v1/events-api');
  }
  return trimmed;
}

/**
 * Relative paths are resolved against the directory npm was started from (`INIT_CWD`, so that
 * `npm start -w services/events` uses the repository's `./data`) or else the working directory.
 */
export function baseDirectory(env: Env = process.env): string {
  return text(env, 'INIT_CWD') ?? process.cwd();
}

function dataDir(env: Env): string {
  // The platform's one data-folder rule: `@platform/logging/data-dir`.
  return dataPath(text(env, 'DATA_DIR'), 'events', env);
}

function auth(env: Env): AuthConfig {
  const secret = text(env, 'JWT_SECRET');
  const jwksUrl = url(env, 'JWT_JWKS_URL', ['http:', 'https:']);
  if (secret !== undefined && jwksUrl !== undefined) {
    throw new ConfigError('JWT_SECRET', 'set either JWT_SECRET or JWT_JWKS_URL, not both');
  }
  if (secret !== undefined) {
    // RFC 7518 section 3.2: an HS256 key must be at least 256 bits.
    if (Buffer.byteLength(secret) < 32) throw new ConfigError('JWT_SECRET', 'must be at least 32 bytes');
    return { kind: 'hmac', secret };
  }
  if (jwksUrl !== undefined) return { kind: 'jwks', url: jwksUrl };
  return { kind: 'dev-secret-file', file: resolve(dataDir(env), 'jwt-secret') };
}

/**
 * The development secret is a default: it serves only on a loopback HOST with the embedded database,
 * unless ALLOW_SANDBOX_SECRETS=true (@platform/default-secrets, issue 28).
 */
function refuseDevSecret(env: Env, auth: AuthConfig, host: string, databaseUrl: string | undefined): void {
  const forced = sandboxSecretsForced(
    env,
    (error) => new ConfigError(error.setting, 'expected true or false'),
  );
  if (auth.kind !== 'dev-secret-file') return;
  const refusal = defaultSecretRefusal(
    {
      setting: 'JWT_SECRET (or JWT_JWKS_URL)',
      what: `the development JWT secret (${auth.file}, generated on first start)`,
    },
    { host, databaseUrl: databaseUrl !== undefined, forced },
  );
  if (refusal) throw new ConfigError('JWT_SECRET', refusal);
}

/** `PUBLIC_URL`: an http(s) origin, e.g. `https://events.example` (a trailing slash is dropped). */
function publicUrl(env: Env): string | undefined {
  const raw = url(env, 'PUBLIC_URL', ['http:', 'https:']);
  if (raw === undefined) return undefined;
  const parsed = new URL(raw);
  if (parsed.origin !== raw.replace(/\/$/, '')) {
    throw new ConfigError('PUBLIC_URL', `expected an origin such as https://events.example, got "${raw}"`);
  }
  return parsed.origin;
}

/** `CALENDAR_NAME`: written into every feed as is, so no control characters (a line break would add lines). */
function calendarName(env: Env): string {
  const raw = text(env, 'CALENDAR_NAME') ?? 'Events';
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it refuses
  if (raw.length > 100 || /[\x00-\x1f\x7f]/.test(raw)) {
    throw new ConfigError('CALENDAR_NAME', 'expected at most 100 characters without control characters');
  }
  return raw;
}

function features(env: Env): FeatureSettings {
  return {
    syncRetentionSeconds: integer(env, 'SYNC_RETENTION', 2_592_000, 1, 10 * 365 * 86_400),
    calendar: {
      name: calendarName(env),
      refreshSeconds: integer(env, 'CALENDAR_REFRESH_SECONDS', 3_600, 60, 7 * 86_400),
      feedsPerUser: integer(env, 'CALENDAR_FEEDS_PER_USER', 20, 1, 1_000),
    },
    webhooks: parseWebhookSettings({
      integer: (name, fallback, min, max) => integer(env, name, fallback, min, max),
      boolean: (name, fallback) => boolean(env, name, fallback),
      text: (name) => text(env, name),
      fail: (name, problem) => new ConfigError(name, problem),
    }),
    publicUrl: publicUrl(env),
  };
}

export function loadConfig(env: Env = process.env): Readonly<Config> {
  const databaseUrl = url(env, 'DATABASE_URL', ['postgres:', 'postgresql:']);
  const host = text(env, 'HOST') ?? '127.0.0.1';
  const authConfig = auth(env);
  refuseDevSecret(env, authConfig, host, databaseUrl);
  const memberClaim = text(env, 'JWT_MEMBER_CLAIM') ?? 'member';
  const log = parseLogSettings(env, { fail: (setting, detail) => new ConfigError(setting, detail) });
  const config: Config = {
    host,
    port: integer(env, 'PORT', 3300, 0, 65_535),
    basePath: basePath(env),
    storage:
      databaseUrl === undefined
        ? // A folder of its own, so the PostgreSQL data files and the dev secret never mix.
          { kind: 'pglite', dir: resolve(dataDir(env), 'pgdata') }
        : { kind: 'postgres', url: databaseUrl, poolMax: integer(env, 'DATABASE_POOL_MAX', 10, 1, 1_000) },
    jwt: {
      auth: authConfig,
      issuer: text(env, 'JWT_ISSUER'),
      audience: text(env, 'JWT_AUDIENCE'),
      clockToleranceSeconds: integer(env, 'JWT_CLOCK_TOLERANCE_SECONDS', 30, 0, 3_600),
      memberClaim,
      // On by default everywhere (no NODE_ENV switch): a token without exp is valid forever.
      requireExp: boolean(env, 'JWT_REQUIRE_EXP', true),
    },
    bodyLimitBytes: integer(env, 'BODY_LIMIT_BYTES', 512 * 1024, 1_024, 64 * 1024 * 1024),
    readCacheMaxEntries: integer(env, 'READ_CACHE_MAX_ENTRIES', 5_000, 0, 1_000_000),
    log,
    metrics: parseMetricsSettings(env, 9300, (setting, detail) => new ConfigError(setting, detail)),
    shutdownTimeoutMs: integer(env, 'SHUTDOWN_TIMEOUT_MS', 10_000, 0, 600_000),
    corsOrigin: corsOrigin(env),
    features: features(env),
  };
  return Object.freeze(config);
}
