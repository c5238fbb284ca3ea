import { createLogger as createPlatformLogger, type Logger } from '@platform/logging/logger';
import type { LogSettings } from '../settings/observability.js';

export type { Logger } from '@platform/logging/logger';

/**
 * The service logger, in the platform's one format (`@platform/logging`). `LOG_FORMAT=json` writes
 * one object per line with the field names of the specification (`@timestamp`, `level` with the
 * reference's `warning`, `@message`, errors under `error`, then the bound fields); `pretty` (or the
 * specification's `text`) writes one readable line, coloured on a terminal. Unset: pretty on a
 * terminal, json otherwise. `LOG_LEVEL` is honoured in both.
 *
 * `destination` defaults to standard error: standard output carries the stats sink when
 * `USE_STATSD=false`.
 */
export function createLogger(settings: LogSettings, destination: NodeJS.WritableStream | number = 2): Logger {
  return createPlatformLogger({
    service: 'ratelimit',
    level: settings.level,
    format: settings.format,
    color: settings.color,
    destination,
    jsonFields: 'logstash',
  });
}
