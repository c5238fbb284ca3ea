import { createRequire } from 'node:module';
import { type DestinationStream, type Logger, type LoggerOptions, pino } from 'pino';
import type PinoPretty from 'pino-pretty';
import { REDACT_PATHS, REDACTED, redactDeep, redactRequestPath, redactText } from './redact.js';
import type { LogFormat, LogLevel } from './settings.js';

export type { Logger } from 'pino';

/**
 * Field names of a JSON line. `pino`: pino's own (`level` number, `time` epoch ms, `msg`).
 * `logstash`: the rate limiter specification's `LOG_FORMAT=json` fields (`@timestamp` ISO,
 * `level` name with logrus' `warning`, `@message`, errors under `error`).
 */
export type JsonFields = 'pino' | 'logstash';

export interface CreateLoggerOptions {
  /** The service name, bound to every line as `service`. */
  readonly service: string;
  readonly level: LogLevel;
  /** `undefined` picks by the output: pretty on a terminal, json otherwise. */
  readonly format: LogFormat | undefined;
  /** Where lines go. @default standard output (file descriptor 1) */
  readonly destination?: NodeJS.WritableStream | number;
  /** Colour of the pretty format. @default on exactly when the destination is a terminal */
  readonly color?: boolean | undefined;
  /** @default "pino" */
  readonly jsonFields?: JsonFields;
}

const LOGRUS_NAMES: Readonly<Record<number, string>> = {
  10: 'trace',
  20: 'debug',
  30: 'info',
  40: 'warning',
  50: 'error',
  60: 'fatal',
};

interface RequestLike {
  method?: string;
  url?: string;
  id?: unknown;
  params?: unknown;
}

/** Requests are logged by method, path (secrets removed) and id only: never headers or bodies. */
function serializeRequest(request: RequestLike): Record<string, unknown> {
  const params = request.params && typeof request.params === 'object' ? request.params : undefined;
  return {
    method: request.method,
    path: redactRequestPath(request.url ?? '', params as Record<string, unknown> | undefined),
    ...(request.id === undefined ? {} : { id: request.id }),
  };
}

function serializeResponse(reply: { statusCode?: number }): Record<string, unknown> {
  return { status: reply.statusCode };
}

/** Errors keep type, message and stack, each scrubbed (a driver error may quote its connection URL). */
function serializeError(error: unknown): unknown {
  if (!(error instanceof Error)) return redactDeep(error, 3);
  // the standard serializer's result has its own prototype: copy it to a plain object to scrub it
  const plain = JSON.parse(JSON.stringify(pino.stdSerializers.err(error))) as unknown;
  return redactDeep(plain, 4);
}

function isTerminal(destination: NodeJS.WritableStream | number): boolean {
  if (typeof destination === 'number') {
    const stream = destination === 2 ? process.stderr : destination === 1 ? process.stdout : undefined;
    return stream?.isTTY === true;
  }
  return (destination as { isTTY?: boolean }).isTTY === true;
}

/** The log format actually used for a destination: the setting, or pretty exactly on a terminal. */
export function resolveFormat(
  format: LogFormat | undefined,
  destination: NodeJS.WritableStream | number = 1,
): LogFormat {
  return format ?? (isTerminal(destination) ? 'pretty' : 'json');
}

const require = createRequire(import.meta.url);

function prettyStream(
  destination: NodeJS.WritableStream | number,
  messageKey: string,
  color: boolean,
): DestinationStream {
  // Loaded only when a pretty line is wanted (a terminal, LOG_FORMAT=pretty): a service writing JSON
  // lines does not carry it (about 5 MB of modules). It is CommonJS, so require() keeps this synchronous.
  const pinoPretty = require('pino-pretty') as typeof PinoPretty;
  return pinoPretty({
    colorize: color,
    sync: true,
    destination,
    messageKey,
    translateTime: 'SYS:HH:MM:ss.l',
    ignore: 'pid,hostname,service',
    singleLine: true,
    errorLikeObjectKeys: ['err', 'error'],
  });
}

/**
 * The one logger factory of the platform: pino with secret redaction by field name, a scrubber
 * for URLs with passwords and secret query values in every string field and message, and the
 * format the settings ask for.
 */
export function createLogger(options: CreateLoggerOptions): Logger {
  const destination = options.destination ?? 1;
  const format = resolveFormat(options.format, destination);
  const logstash = options.jsonFields === 'logstash' && format === 'json';
  const base: LoggerOptions = {
    level: options.level,
    base: { service: options.service },
    redact: { paths: [...REDACT_PATHS], censor: REDACTED },
    serializers: { req: serializeRequest, res: serializeResponse, err: serializeError },
    formatters: {
      log: (object) => {
        const scrubbed = redactDeep(object, 4) as Record<string, unknown>;
        // the specification's JSON lines carry an error under `error`
        if (logstash && 'err' in scrubbed) {
          const { err, ...rest } = scrubbed;
          return { ...rest, error: err };
        }
        return scrubbed;
      },
      ...(logstash
        ? { level: (_label: string, number: number) => ({ level: LOGRUS_NAMES[number] ?? String(number) }) }
        : {}),
    },
    hooks: {
      // The message is scrubbed too: `log.info(\`connected to ${url}\`)` must not leak a password.
      logMethod(args, method) {
        const scrubbed = args.map((arg) => (typeof arg === 'string' ? redactText(arg) : arg));
        method.apply(this, scrubbed as Parameters<typeof method>);
      },
    },
    ...(logstash
      ? {
          messageKey: '@message',
          errorKey: 'error',
          timestamp: () => `,"@timestamp":"${new Date().toISOString()}"`,
        }
      : {}),
  };
  if (logstash) {
    base.serializers = { ...base.serializers, error: serializeError };
  }
  const stream: DestinationStream =
    format === 'pretty'
      ? prettyStream(destination, 'msg', options.color ?? isTerminal(destination))
      : typeof destination === 'number'
        ? pino.destination({ dest: destination, sync: true })
        : (destination as DestinationStream);
  return pino(base, stream);
}
