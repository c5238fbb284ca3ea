/**
 * Typed readers for environment settings. Every reader names the setting in its error, so a wrong
 * value fails start-up with a message like `NEAR_LIMIT_RATIO must be a number between 0 and 1, got 'x'`.
 */
export type Env = Readonly<Record<string, string | undefined>>;

export class SettingError extends Error {
  override name = 'SettingError';
}

export function text(env: Env, name: string, fallback: string): string {
  const v = env[name];
  return v === undefined || v === '' ? fallback : v;
}

export function optionalText(env: Env, name: string): string | undefined {
  const v = env[name];
  return v === undefined || v === '' ? undefined : v;
}

const TRUE = new Set(['1', 't', 'T', 'TRUE', 'true', 'True']);
const FALSE = new Set(['0', 'f', 'F', 'FALSE', 'false', 'False']);

/** Booleans as Go's strconv.ParseBool reads them (the reference's settings parser). */
export function bool(env: Env, name: string, fallback: boolean): boolean {
  const v = env[name];
  if (v === undefined || v === '') return fallback;
  if (TRUE.has(v)) return true;
  if (FALSE.has(v)) return false;
  throw new SettingError(`${name} must be true or false, got '${v}'`);
}

export function integer(
  env: Env,
  name: string,
  fallback: number,
  min = 0,
  max = Number.MAX_SAFE_INTEGER,
): number {
  const v = env[name];
  if (v === undefined || v === '') return fallback;
  const n = Number(v);
  if (!/^-?\d+$/.test(v.trim()) || !Number.isSafeInteger(n) || n < min || n > max) {
    throw new SettingError(`${name} must be an integer between ${min} and ${max}, got '${v}'`);
  }
  return n;
}

export function ratio(env: Env, name: string, fallback: number): number {
  const v = env[name];
  if (v === undefined || v === '') return fallback;
  const n = Number(v);
  if (!Number.isFinite(n) || n < 0 || n > 1 || v.trim() === '') {
    throw new SettingError(`${name} must be a number between 0 and 1, got '${v}'`);
  }
  return n;
}

const UNIT_MS: Record<string, number> = {
  ns: 1e-6,
  us: 1e-3,
  µs: 1e-3,
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
};

/** A Go duration (`300ms`, `10s`, `1m30s`; a bare `0` is zero) in milliseconds. */
export function duration(env: Env, name: string, fallbackMs: number): number {
  const v = env[name];
  if (v === undefined || v === '') return fallbackMs;
  if (v === '0') return 0;
  const re = /(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)/y;
  let total = 0;
  let pos = 0;
  while (pos < v.length) {
    re.lastIndex = pos;
    const m = re.exec(v);
    if (!m) throw new SettingError(`${name} must be a duration such as 10s or 1m30s, got '${v}'`);
    total += Number(m[1]) * UNIT_MS[m[2]!]!;
    pos = re.lastIndex;
  }
  if (pos === 0) throw new SettingError(`${name} must be a duration such as 10s or 1m30s, got '${v}'`);
  return total;
}

export function oneOf<T extends string>(env: Env, name: string, allowed: readonly T[], fallback: T): T {
  const v = env[name];
  if (v === undefined || v === '') return fallback;
  const found = allowed.find((a) => a.toLowerCase() === v.toLowerCase());
  if (!found) throw new SettingError(`${name} must be one of ${allowed.join(', ')}, got '${v}'`);
  return found;
}
