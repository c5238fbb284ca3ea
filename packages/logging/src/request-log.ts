import Fastify, { type FastifyServerOptions } from 'fastify';
import type { Logger } from 'pino';
import { redactRequestPath } from './redact.js';
import { requestLineLevel, writeRequestLine } from './request-line.js';

// The line itself (and logNodeRequest for plain node:http servers) lives in request-line.ts, which
// does not load Fastify: the rate limiter and the blog do not carry it for their request lines.
export { isProbePath, logNodeRequest, type RequestLine, writeRequestLine } from './request-line.js';

interface FastifyRequestLike {
  readonly method: string;
  readonly url: string;
  readonly params: unknown;
  readonly log: unknown;
}
interface FastifyReplyLike {
  readonly statusCode: number;
  readonly elapsedTime: number;
}
/** Fastify's `LogController` (fastify >= 5.12), which its type declarations do not describe yet. */
type LogControllerClass = new (options?: {
  disableRequestLogging?: boolean;
}) => {
  incomingRequest(request: FastifyRequestLike, reply: FastifyReplyLike): void;
  requestCompleted(error: unknown, request: FastifyRequestLike, reply: FastifyReplyLike): void;
  routeNotFound(request: FastifyRequestLike, reply: FastifyReplyLike): void;
};
const { LogController } = Fastify as unknown as { LogController: LogControllerClass };

/**
 * Fastify's request log lines, replaced: instead of "incoming request" and "request completed"
 * (two lines at info, with the raw URL) and "Route GET:<url> not found" (the raw path, which may hold
 * a pasted secret), one line when the response is finished, secrets removed from its path.
 */
class OneLinePerRequest extends LogController {
  override incomingRequest(): void {}
  override routeNotFound(): void {}
  override requestCompleted(error: unknown, request: FastifyRequestLike, reply: FastifyReplyLike): void {
    const log = request.log as Logger;
    // Nothing to build (the path's redaction is a few regular expressions) when no line is written:
    // a service at LOG_LEVEL=warn skipped every line but still paid for it on every request.
    const level = requestLineLevel(log, request.url);
    if (!error && level === undefined) return;
    const path = redactRequestPath(request.url, request.params as Record<string, unknown> | undefined);
    if (error) log.error({ err: error, path }, 'response failed');
    if (level === undefined) return;
    writeRequestLine(
      log,
      { method: request.method, path, status: reply.statusCode, durationMs: reply.elapsedTime },
      level,
    );
  }
}

/**
 * Fastify options that make every request one log line (see `OneLinePerRequest`): spread them into
 * the options of `Fastify({...})`.
 */
export function requestLogOptions(): Pick<FastifyServerOptions, 'disableRequestLogging'> {
  // `logController` is a Fastify 5.12 option its types do not list yet: the cast carries it through.
  return { logController: new OneLinePerRequest() } as Pick<FastifyServerOptions, 'disableRequestLogging'>;
}
