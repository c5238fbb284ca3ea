/**
 * The one error handler: every failure leaves as `{statusCode, message, error}`. Expected failures
 * are `ApiError`s; Fastify's own errors (validation, content type, body size, JSON syntax) are mapped
 * by code; anything else is a 500 that shows no internals and is logged with the request id.
 */
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, bodyOf, type ErrorCode, MESSAGES } from '../errors.js';
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
    case 412:
      return 'PRECONDITION_FAILED';
    case 413:
      return 'PAYLOAD_TOO_LARGE';
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

export function installErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError | ApiError, request: FastifyRequest, reply: FastifyReply) => {
    const { code, message } = toResponse(error);
    const body = bodyOf(code, message);
    if (body.statusCode >= 500) request.log.error({ err: error }, 'request failed');
    else request.log.info({ statusCode: body.statusCode, message }, 'request refused');
    if (error instanceof ApiError) reply.headers(error.headers);
    return reply.code(body.statusCode).type('application/json; charset=utf-8').send(body);
  });

  app.setNotFoundHandler((request, reply) => {
    const body = bodyOf('NOT_FOUND', `Cannot ${request.method} ${request.url.split('?')[0]}`);
    return reply.code(404).send(body);
  });
}
