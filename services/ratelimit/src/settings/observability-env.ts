import { parseDurationMs } from './duration.js';

/**
 * Typed readers of the observability settings. Each names the setting in its error, so a wrong
 * value fails start-up with a message like `STATSD_PORT: expected an integer from 1 to 65535, got 'x'`.
 */
export type Env = Readonly<Record<string, string | undefined>>;

/** Thrown for a setting with a wrong value; the message starts with the setting's name. */
export class SettingError extends Error {
  constructor(
    readonly setting: string,
    message: string,
  ) {
    super(`${setting}: ${message}`);
    this.name = 'SettingError';
  }
}

export function str(env: Env, name: string, fallback: string): string {
  const v = env[name];
  return v === undefined || v === '' ? fallback : v;
}

export function optional(env: Env, name: string): string | undefined {
  const v = env[name];
  return v === undefined || v === '' ? undefined : v;
}

export function bool(env: Env, name: string, fallback: boolean): boolean {
  const v = env[name];
  if (v === undefined || v === '') return fallback;
  // The reference accepts Go's strconv.ParseBool spellings.
  if (/^(1|t|true)$/i.test(v)) return true;
  if (/^(0|f|false)$/i.test(v)) return false;
  throw new SettingError(name, `expected true or false, got '${v}'`);
}

export function int(env: Env, name: string, fallback: number, min: number, max: number): number {
  const v = env[name];
  if (v === undefined || v === '') return fallback;
  if (!/^\d+$/.test(v.trim()) || Number(v) < min || Number(v) > max) {
    throw new SettingError(name, `expected an integer from ${min} to ${max}, got '${v}'`);
  }
  return Number(v);
}

export function ratio(env: Env, name: string, fallback: number): number {
  const v = env[name];
  if (v === undefined || v === '') return fallback;
  const n = Number(v);
  if (v.trim() === '' || !Number.isFinite(n) || n < 0 || n > 1) {
    throw new SettingError(name, `expected a number from 0 to 1, got '${v}'`);
  }
  return n;
}

export function duration(env: Env, name: string, fallback: string): number {
  const v = str(env, name, fallback);
  const ms = parseDurationMs(v);
  if (ms === null || ms < 0)
    throw new SettingError(name, `expected a duration such as 10s or 1m30s, got '${v}'`);
  return ms;
}

/** `k1:v1,k2:v2` (value may itself contain ':'; everything after the first ':' is the value). */
export function pairs(env: Env, name: string, separator: string): [string, string][] {
  const v = optional(env, name);
  if (v === undefined) return [];
  return v.split(',').map((item) => {
    const at = item.indexOf(separator);
    const key = at < 0 ? '' : item.slice(0, at).trim();
    if (key === '')
      throw new SettingError(name, `expected <key>${separator}<value> pairs separated by ',', got '${item}'`);
    return [key, item.slice(at + 1).trim()];
  });
}

export function hostPort(
  env: Env,
  name: string,
  fallback: string,
): { host: string | undefined; port: number } {
  const v = str(env, name, fallback);
  const at = v.lastIndexOf(':');
  const port = Number(v.slice(at + 1));
  if (at < 0 || !/^\d+$/.test(v.slice(at + 1)) || port > 65_535) {
    throw new SettingError(name, `expected [host]:port, got '${v}'`);
  }
  const host = v.slice(0, at).replace(/^\[(.*)\]$/, '$1');
  return { host: host === '' ? undefined : host, port };
}
