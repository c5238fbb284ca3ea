import { dataPath } from '@platform/logging/data-dir';
import { LogSettingError, type LogSettings, parseLogSettings } from '@platform/logging/settings';

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
  /** Seed the sample content when the data file does not exist yet. @default true */
  readonly seed: boolean;
  /** How long a stored idempotent answer is replayed, in seconds. @default 86400 */
  readonly idempotencyTtlSeconds: number;
  /** LOG_LEVEL @default "info"; LOG_FORMAT @default pretty on a terminal, json otherwise */
  readonly log: LogSettings;
}

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

/** `LOG_LEVEL` and `LOG_FORMAT` as every service reads them (`@platform/logging`). */
function logSettings(env: NodeJS.ProcessEnv): LogSettings {
  try {
    return parseLogSettings(env);
  } catch (error) {
    if (error instanceof LogSettingError) throw new ConfigError(error.message);
    throw error;
  }
}

function integer(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new ConfigError(`${name} must be an integer between ${min} and ${max}, got "${raw}"`);
  }
  return value;
}

function boolean(env: NodeJS.ProcessEnv, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (raw === 'true' || raw === '1') return true;
  if (raw === 'false' || raw === '0') return false;
  throw new ConfigError(`${name} must be true or false, got "${raw}"`);
}

/** Reads, validates and freezes the configuration; the only place reading `process.env`. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env, cwd: string = process.cwd()): BlogConfig {
  const token = env['BLOG_AUTH_TOKEN'];
  if (token !== undefined && token.length > 0 && token.length < 8) {
    throw new ConfigError('BLOG_AUTH_TOKEN must be at least 8 characters long');
  }
  const log = logSettings(env);
  return Object.freeze({
    port: integer(env, 'PORT', 4000, 0, 65535),
    host: env['HOST'] || '127.0.0.1',
    dataDir: dataPath(env['BLOG_DATA_DIR'], 'blog-graphql', env, cwd),
    authToken: token || DEVELOPMENT_AUTH_TOKEN,
    usingDevelopmentToken: !token,
    seed: boolean(env, 'BLOG_SEED', true),
    idempotencyTtlSeconds: integer(env, 'IDEMPOTENCY_TTL_SECONDS', 86_400, 1, 30 * 86_400),
    log,
  });
}
