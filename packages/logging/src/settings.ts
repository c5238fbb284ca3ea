/**
 * `LOG_LEVEL` and `LOG_FORMAT`, with one meaning in every service. Each service's `config.ts` calls
 * `parseLogSettings` with its environment and its own config error (`fail`), so a wrong value stops
 * the start naming the setting.
 */
export type LogLevel = 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'fatal' | 'silent';

/**
 * `json`: one JSON object per line. `pretty`: one readable line per record, coloured when the output
 * is a terminal. Unset (`undefined`): `pretty` when the log's output is a terminal, `json` otherwise.
 */
export type LogFormat = 'json' | 'pretty';

export interface LogSettings {
  /** `LOG_LEVEL` @default "info" (the rate limiter: "warn", as its reference) */
  readonly level: LogLevel;
  /** `LOG_FORMAT` @default pretty on a terminal, json otherwise */
  readonly format: LogFormat | undefined;
  /**
   * Colour in the pretty format: `NO_COLOR` (any value) turns it off, `FORCE_COLOR` (not `0`) on, as
   * the usual conventions say; the launcher sets `FORCE_COLOR` for services whose output it pipes to
   * a terminal. @default on exactly when the output is a terminal
   */
  readonly color: boolean | undefined;
}

export class LogSettingError extends Error {
  constructor(
    readonly setting: 'LOG_LEVEL' | 'LOG_FORMAT',
    /** The problem without the setting's name, for services whose errors add the name themselves. */
    readonly detail: string,
  ) {
    super(`${setting}: ${detail}`);
    this.name = 'LogSettingError';
  }
}

/** Level names, with the logrus spellings the rate limiter's reference accepts. */
const LEVELS: Readonly<Record<string, LogLevel>> = {
  trace: 'trace',
  debug: 'debug',
  info: 'info',
  warn: 'warn',
  warning: 'warn',
  error: 'error',
  fatal: 'fatal',
  panic: 'fatal',
  silent: 'silent',
};

/** `text` is the rate limiter specification's name of its readable format; it means `pretty`. */
const FORMATS: Readonly<Record<string, LogFormat>> = { json: 'json', pretty: 'pretty', text: 'pretty' };

export interface LogEnv {
  readonly LOG_LEVEL?: string | undefined;
  readonly LOG_FORMAT?: string | undefined;
  readonly NO_COLOR?: string | undefined;
  readonly FORCE_COLOR?: string | undefined;
}

export interface LogSettingOptions {
  /** The level when `LOG_LEVEL` is unset. @default "info" */
  readonly level?: LogLevel;
  /**
   * The error a wrong value throws: the service's own config error naming the setting, so that it
   * stops the start like its other settings. @default a `LogSettingError`
   */
  readonly fail?: (setting: LogSettingError['setting'], detail: string) => Error;
}

export function parseLogSettings(env: LogEnv, options: LogSettingOptions = {}): LogSettings {
  const fail = options.fail ?? ((setting, detail) => new LogSettingError(setting, detail));
  const rawLevel = env.LOG_LEVEL?.trim();
  const level = rawLevel ? LEVELS[rawLevel.toLowerCase()] : (options.level ?? 'info');
  if (level === undefined) {
    throw fail(
      'LOG_LEVEL',
      `unknown level "${rawLevel}" (expected trace, debug, info, warn, error, fatal or silent)`,
    );
  }
  const rawFormat = env.LOG_FORMAT?.trim();
  const format = rawFormat ? FORMATS[rawFormat.toLowerCase()] : undefined;
  if (rawFormat && format === undefined) {
    throw fail('LOG_FORMAT', `expected json or pretty, got "${rawFormat}"`);
  }
  const color =
    env.NO_COLOR !== undefined && env.NO_COLOR !== ''
      ? false
      : env.FORCE_COLOR !== undefined && env.FORCE_COLOR !== ''
        ? env.FORCE_COLOR !== '0'
        : undefined;
  return Object.freeze({ level, format, color });
}
