import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { redactRequestPath } from './redact.js';

/**
 * One line per request, written when the response is finished: method, path (secrets removed),
 * status, duration and request id. Health and readiness probes are logged at `debug` so that an
 * orchestrator polling every second does not drown the `info` log.
 */
const PROBE = /\/(health|healthz|healthcheck|ready|readyz|readiness|live|livez|liveness)$/;

/** True for the health and readiness routes of every service (`/health`, `/healthcheck`, `/readyz`...). */
export function isProbePath(path: string): boolean {
  const query = path.indexOf('?'); // not split(): this runs on every request
  return PROBE.test(query === -1 ? path : path.slice(0, query));
}

export interface RequestLine {
  readonly method: string;
  /** The path and query as requested, with secrets already removed. */
  readonly path: string;
  readonly status: number;
  readonly durationMs: number;
  /** Left out when the logger already binds it (Fastify's `request.log` carries `reqId`). */
  readonly reqId?: string;
}

/**
 * Whether a line at `level` would be written. Fastify hands out its own no-op logger (not pino, no
 * `isLevelEnabled`) when an app is built with logging off: then the line is built and dropped there.
 */
function levelEnabled(logger: Logger, level: 'debug' | 'info'): boolean {
  const check = (logger as Partial<Pick<Logger, 'isLevelEnabled'>>).isLevelEnabled;
  return check === undefined || check.call(logger, level);
}

/** The level of the request line for `path` (probes at debug), or undefined when it would be dropped. */
export function requestLineLevel(logger: Logger, path: string): 'debug' | 'info' | undefined {
  const level = isProbePath(path) ? 'debug' : 'info';
  return levelEnabled(logger, level) ? level : undefined;
}

/** Writes the line; `level` when the caller has already asked `requestLineLevel`. */
export function writeRequestLine(
  logger: Logger,
  line: RequestLine,
  level = requestLineLevel(logger, line.path),
): void {
  if (level === undefined) return;
  logger[level](
    { ...line, durationMs: Math.round(line.durationMs * 100) / 100 },
    `${line.method} ${line.path} ${line.status} ${line.durationMs.toFixed(1)}ms`,
  );
}

let nextId = 0;

/**
 * The same line for a plain `node:http` handler (the rate limiter's HTTP servers, the blog). Call at
 * the start of the handler; the line is written when the response finishes or the client goes away.
 * An incoming `x-request-id` is kept when short and plain, so that logs cannot be forged.
 */
export function logNodeRequest(logger: Logger, req: IncomingMessage, res: ServerResponse): void {
  // nothing to do (not even a clock read) when the line would be dropped: the rate limiter's hot path
  const level = requestLineLevel(logger, req.url ?? '/');
  if (level === undefined) return;
  const started = process.hrtime.bigint();
  const header = req.headers['x-request-id'];
  const reqId =
    typeof header === 'string' && /^[\w.:-]{1,64}$/.test(header) ? header : `req-${(++nextId).toString(36)}`;
  res.once('close', () => {
    writeRequestLine(
      logger,
      {
        method: req.method ?? 'GET',
        path: redactRequestPath(req.url ?? '/'),
        status: res.statusCode,
        durationMs: Number(process.hrtime.bigint() - started) / 1e6,
        reqId,
      },
      level,
    );
  });
}
