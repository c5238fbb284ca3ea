import { type DestinationStream, type Logger, pino } from 'pino';
import type { LogSettings } from '../settings/observability.js';

/**
 * The service logger. `LOG_FORMAT=json` writes one object per line with the field names of the
 * reference (`@timestamp`, `level`, `@message`, then the bound fields); the default text format
 * writes logfmt-style lines like the reference's text logger:
 * `time="2024-01-01T00:00:00.000Z" level=warning msg="config load failed" error="..."`.
 * `LOG_LEVEL` is honoured in both.
 */
export type { Logger } from 'pino';

/** Level names as the reference prints them. */
const LEVEL_NAMES: Record<number, string> = {
  10: 'trace',
  20: 'debug',
  30: 'info',
  40: 'warning',
  50: 'error',
  60: 'fatal',
};

function quote(value: unknown): string {
  const s = typeof value === 'string' ? value : JSON.stringify(value);
  return /^[A-Za-z0-9_.:/@+-]+$/.test(s) ? s : JSON.stringify(s);
}

/** Formats one pino JSON line as a text line. */
export function jsonLineToText(line: string): string {
  const record = JSON.parse(line) as Record<string, unknown>;
  const { '@timestamp': time, level, '@message': msg, ...rest } = record;
  const parts = [
    `time=${quote(time)}`,
    `level=${typeof level === 'string' ? level : String(level)}`,
    `msg=${JSON.stringify(msg ?? '')}`,
  ];
  for (const [k, v] of Object.entries(rest)) parts.push(`${k}=${quote(v)}`);
  return `${parts.join(' ')}\n`;
}

class TextDestination implements DestinationStream {
  constructor(private readonly target: DestinationStream) {}
  write(chunk: string): void {
    for (const line of chunk.split('\n')) {
      if (line.length > 0) this.target.write(jsonLineToText(line));
    }
  }
}

/**
 * Builds the logger for the settings. `destination` defaults to standard error (standard output
 * carries the stats sink when `USE_STATSD=false`).
 */
export function createLogger(
  settings: LogSettings,
  destination: DestinationStream = pino.destination(2),
): Logger {
  const options = {
    level: settings.level,
    messageKey: '@message',
    errorKey: 'error',
    base: null,
    timestamp: () => `,"@timestamp":"${new Date().toISOString()}"`,
    formatters: {
      level: (_label: string, number: number) => ({ level: LEVEL_NAMES[number] ?? String(number) }),
    },
  };
  return pino(options, settings.format === 'json' ? destination : new TextDestination(destination));
}
