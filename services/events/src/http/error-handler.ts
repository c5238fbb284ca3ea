/**
 * The one error handler: every failure leaves as `{statusCode, message, error}`. Expected failures
 * are `ApiError`s; Fastify's own errors (validation, content type, body size, JSON syntax) are mapped
 * by code; anything else is a 500 that shows no internals and is logged with the request id.
 */

import { allowedMethods, allowHeader } from '@platform/http-edge/allowed-methods';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, bodyOf, type ErrorCode, MESSAGES } from '../errors.js';
import { problemOf, wantsProblem } from './problem.js';
import { type SchemaIssue, validationMessages } from './validation-messages.js';

function codeOfStatus(status: number): ErrorCode {
  switch (status) {
    case 401:
      return 'UNAUTHENTICATED';
    case 403:
      return 'FORBIDDEN';
    case 404:
      return 'NOT_FOUND';
    case 405:
      return 'METHOD_NOT_ALLOWED';
    case 409:
      return 'CONFLICT';
    case 410:
      return 'GONE';
    case 412:
      return 'PRECONDITION_FAILED';
    case 413:
      return 'PAYLOAD_TOO_LARGE';
    case 414:
      return 'URI_TOO_LONG';
    case 415:
      return 'UNSUPPORTED_MEDIA_TYPE';
    case 503:
      return 'SERVICE_UNAVAILABLE';
    default:
      return 'BAD_REQUEST';
  }
}

/** Fastify errors whose messages are written for clients, by their `code`. */
const FASTIFY_MESSAGES: Record<string, string> = {
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'Content-Type must be application/json',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'Content-Length does not match the body',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'The request body is empty but Content-Type is application/json',
  FST_ERR_CTP_INVALID_JSON_BODY: 'The request body is not valid JSON',
};

function toResponse(error: FastifyError | ApiError): { code: ErrorCode; message: string | string[] } {
  if (error instanceof ApiError) return { code: error.code, message: error.messages };
  // The router's own errors; the message never echoes the URL (it may be huge or carry a token).
  if (error.code === 'FST_ERR_MAX_PARAM_LENGTH') {
    return {
      code: 'URI_TOO_LONG',
      message: 'The URL is too long: a path parameter is at most 500 characters (an eventId at most 64)',
    };
  }
  if (error.code === 'FST_ERR_BAD_URL') return { code: 'BAD_REQUEST', message: 'The URL is malformed' };
  if (error.validation !== undefined) {
    const context = error.validationContext ?? 'request';
    return { code: 'VALIDATION', message: validationMessages(error.validation as SchemaIssue[], context) };
  }
  const status = error.statusCode ?? 500;
  if (status >= 500) return { code: 'INTERNAL', message: MESSAGES.internal };
  if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
    return { code: 'PAYLOAD_TOO_LARGE', message: 'The request body is larger than the configured limit' };
  }
  // A JSON syntax error from the body parser has status 400 and no FST code.
  const known = FASTIFY_MESSAGES[error.code];
  const message =
    known ?? (error instanceof SyntaxError ? FASTIFY_MESSAGES.FST_ERR_CTP_INVALID_JSON_BODY! : error.message);
  return { code: codeOfStatus(status), message };
}

/**
 * Sends the error body: the spec's NestJS shape by default, RFC 9457 problem details when the
 * client asks for `application/problem+json`. The request id is always in `X-Request-Id`.
 */
export function sendError(
  request: FastifyRequest,
  reply: FastifyReply,
  code: ErrorCode,
  message: string | string[],
): FastifyReply {
  const body = bodyOf(code, message);
  reply.header('x-request-id', request.id);
  if (wantsProblem(request.headers.accept)) {
    const path = request.url.split('?')[0] ?? '';
    return (
      reply
        .code(body.statusCode)
        .type('application/problem+json; charset=utf-8')
        // Serialised here: the route's response schema describes the NestJS shape, not this one.
        .send(JSON.stringify(problemOf(body, path.length <= 256 ? path : undefined, request.id)))
    );
  }
  return reply.code(body.statusCode).type('application/json; charset=utf-8').send(body);
}

export function installErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError | ApiError, request: FastifyRequest, reply: FastifyReply) => {
    const { code, message } = toResponse(error);
    const status = bodyOf(code, message).statusCode;
    if (status >= 500) request.log.error({ err: error }, 'request failed');
    else request.log.info({ statusCode: status, message }, 'request refused');
    if (error instanceof ApiError) reply.headers(error.headers);
    return sendError(request, reply, code, message);
  });

  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0] ?? '';
    const shown = path.length <= 256 ? path : `${path.slice(0, 256)}…`;
    // A known path with another method: 405 with `allow` (RFC 9110), in the same shape.
    const allowed = allowedMethods(request.server, request.url);
    if (allowed.length > 0) {
      reply.header('allow', allowHeader(allowed));
      return sendError(
        request,
        reply,
        'METHOD_NOT_ALLOWED',
        `Cannot ${request.method} ${shown}; allowed: ${allowHeader(allowed)}`,
      );
    }
    return sendError(request, reply, 'NOT_FOUND', `Cannot ${request.method} ${shown}`);
  });
}

/**
 * Fastify's `frameworkErrors` (router failures such as a too long parameter, 414, or a malformed
 * URL): no hook has run, so the request id and CORS headers are set here.
 */
export function frameworkErrorHandler(
  cors: (request: FastifyRequest) => Record<string, string>,
): (error: FastifyError, request: FastifyRequest, reply: FastifyReply) => void {
  return (error, request, reply) => {
    const { code, message } = toResponse(error);
    request.log.info({ statusCode: bodyOf(code, message).statusCode, code: error.code }, 'request refused');
    reply.headers(cors(request));
    void sendError(request, reply, code, message);
  };
}
