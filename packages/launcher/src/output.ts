import { createLogger, type Logger } from '@platform/logging/logger';
import type { LogFormat, LogLevel } from '@platform/logging/settings';

/**
 * Where the launcher's own messages and its services' lines go, in the platform's one log format.
 * `pretty` (a terminal): every line prefixed with its service's name, the services themselves
 * writing pretty lines. `json` (anything else): the services' JSON lines passed through unchanged
 * (each carries its `service`), anything else a service prints wrapped into a JSON line, and the
 * launcher's own messages JSON lines of `service: "launcher"`, so that a collector reads one stream.
 */
export interface LauncherOutput {
  readonly format: LogFormat;
  /** A message of the launcher itself. */
  say(message: string, fields?: Record<string, unknown>): void;
  /** One line a service printed on its standard output or error. */
  serviceLine(service: string, index: number, stream: 'stdout' | 'stderr', line: string): void;
  /** Text meant for a person at a terminal (the summary table); dropped in the JSON format. */
  forPeople(text: string): void;
}

const COLORS = [36, 35, 33, 32, 34, 31];

export function prettyOutput(
  out: NodeJS.WritableStream,
  prefixWidth: number,
  color: boolean,
): LauncherOutput {
  const prefix = (name: string, index: number): string => {
    const label = name.padEnd(prefixWidth);
    if (!color) return `${label} | `;
    return `\u001b[${COLORS[index % COLORS.length]}m${label}\u001b[0m | `;
  };
  return {
    format: 'pretty',
    say: (message) => out.write(`${'launcher'.padEnd(prefixWidth)} | ${message}\n`),
    serviceLine: (service, index, _stream, line) => out.write(`${prefix(service, index)}${line}\n`),
    forPeople: (text) => out.write(text),
  };
}

export function jsonOutput(out: NodeJS.WritableStream, level: LogLevel): LauncherOutput {
  const loggers = new Map<string, Logger>();
  const loggerOf = (service: string): Logger => {
    let logger = loggers.get(service);
    if (!logger) {
      logger = createLogger({ service, level, format: 'json', destination: out });
      loggers.set(service, logger);
    }
    return logger;
  };
  return {
    format: 'json',
    say: (message, fields = {}) => loggerOf('launcher').info(fields, message),
    serviceLine(service, _index, stream, line) {
      if (line.startsWith('{') && line.endsWith('}')) {
        try {
          JSON.parse(line);
          out.write(`${line}\n`);
          return;
        } catch {
          // not JSON after all: wrapped below
        }
      }
      if (line.trim() === '') return;
      // a stack trace or a plain message: error on standard error, info on standard output
      loggerOf(service)[stream === 'stderr' ? 'error' : 'info'](line);
    },
    forPeople: () => {},
  };
}
