/**
 * Reading settings from the environment, shared by the services' `config.ts` (each reads
 * `process.env` once, there). Two message styles exist, kept as the services document them:
 * the exchange and the gateway say `invalid setting NAME: problem` (`ConfigError`, `integer`,
 * `boolean`); the blog and the proxy say `NAME must be ...` through their own error class
 * (`integerBetween`, `trueOrFalse` with the service's `fail`).
 */

import { isIP } from 'node:net';
import path from 'node:path';

type Env = Readonly<Record<string, string | undefined>>;

/** A wrong setting, named: `invalid setting NAME: problem`. */
export class ConfigError extends Error {
  constructor(setting: string, problem: string) {
    super(`invalid setting ${setting}: ${problem}`);
    this.name = 'ConfigError';
  }
}

/** A whole number within `min..max` (digits only), `fallback` when unset or empty. */
export function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw)) throw new ConfigError(name, `expected an integer, got "${raw}"`);
  const value = Number(raw);
  if (value < min || value > max) throw new ConfigError(name, `expected ${min}..${max}, got ${value}`);
  return value;
}

/**
 * `TRUSTED_PROXIES` (the exchange's and the gateway's): proxies whose `X-Forwarded-For` names the
 * client (Fastify `trustProxy`), as addresses, CIDRs or proxy-addr's names (`loopback`, `linklocal`,
 * `uniquelocal`), checked here so a typo stops the start. Unset: none, the socket's address counts.
 */
export function trustedProxies(env: Env): readonly string[] {
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

/** `1|true|yes|on` or `0|false|no|off` (any case), `fallback` when unset or empty. */
export function boolean(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (/^(1|true|yes|on)$/i.test(raw)) return true;
  if (/^(0|false|no|off)$/i.test(raw)) return false;
  throw new ConfigError(name, `expected true or false, got "${raw}"`);
}

/** An integer within `min..max` (`NAME must be an integer between ...`), `fallback` when unset. */
export function integerBetween(
  env: Env,
  name: string,
  fallback: number,
  min: number,
  max: number,
  fail: (message: string) => Error,
): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw fail(`${name} must be an integer between ${min} and ${max}, got "${raw}"`);
  }
  return value;
}

/** `true`/`1` or `false`/`0` (`NAME must be true or false`), `fallback` when unset. */
export function trueOrFalse(
  env: Env,
  name: string,
  fallback: boolean,
  fail: (message: string) => Error,
): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (raw === 'true' || raw === '1') return true;
  if (raw === 'false' || raw === '0') return false;
  throw fail(`${name} must be true or false, got "${raw}"`);
}

/** `integerBetween` and `trueOrFalse` bound to a service's error class (`fail`), as its config.ts uses them. */
export function settingReaders(fail: (message: string) => Error) {
  return {
    integer: (env: Env, name: string, fallback: number, min: number, max: number): number =>
      integerBetween(env, name, fallback, min, max, fail),
    boolean: (env: Env, name: string, fallback: boolean): boolean => trueOrFalse(env, name, fallback, fail),
  };
}

/**
 * Runs a package's setting parser (`parseLogSettings`, `parseQueryLimits`...) and turns the error
 * class it throws into the service's config error, so every wrong setting stops the start alike.
 */
export function settingOr<T, E extends Error>(
  parse: () => T,
  errorClass: abstract new (...args: never[]) => E,
  fail: (error: E) => Error,
): T {
  try {
    return parse();
  } catch (error) {
    if (error instanceof errorClass) throw fail(error);
    throw error;
  }
}

/**
 * `DATABASE_URL` (a `postgres://` URL, pool of `DATABASE_POOL_SIZE` connections, 10 by default,
 * 1..200), or the embedded PGlite in `<dataDir>/pgdata` when it is unset: the storage setting of
 * the services on `@platform/sql-storage` (its `StorageConfig`).
 */
export function storageSetting(
  env: Env,
  dataDir: string,
):
  | { readonly kind: 'postgres'; readonly url: string; readonly poolSize: number }
  | { readonly kind: 'pglite'; readonly dataDir: string } {
  const databaseUrl = env.DATABASE_URL;
  if (!databaseUrl) return { kind: 'pglite', dataDir: path.join(dataDir, 'pgdata') };
  if (!/^postgres(ql)?:\/\//.test(databaseUrl)) {
    throw new ConfigError('DATABASE_URL', 'expected a postgres:// or postgresql:// URL');
  }
  return { kind: 'postgres', url: databaseUrl, poolSize: integer(env, 'DATABASE_POOL_SIZE', 10, 1, 200) };
}
