import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, type ErrorName, errorBody, errorSpec } from '../errors.js';

/** Fastify's `maxParamLength`: a longer path parameter is refused by the router, before any route
 * (above every schema's maxLength, so those get their own 400 up to this length). */
export const MAX_PARAM_LENGTH = 500;

function classify(error: FastifyError): { name: ErrorName; message: string; field?: string } {
  if (error instanceof ApiError) {
    return { name: error.errorName, message: error.message, ...(error.field ? { field: error.field } : {}) };
  }
  if (error.validation) return { name: 'validation_failed', message: error.message };
  switch (error.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return { name: 'body_too_large', message: 'request body is larger than the limit' };
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return { name: 'unsupported_media_type', message: error.message };
    case 'FST_ERR_MAX_PARAM_LENGTH':
      return {
        name: 'uri_too_long',
        message: `a path parameter is longer than ${MAX_PARAM_LENGTH} characters`,
      };
    case 'FST_ERR_BAD_URL':
      return { name: 'validation_failed', message: 'the URL is not valid (bad percent-encoding)' };
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return { name: 'validation_failed', message: error.message };
  }
  if (error instanceof SyntaxError || (error.statusCode !== undefined && error.statusCode < 500)) {
    return { name: 'validation_failed', message: error.message };
  }
  return { name: 'internal', message: 'internal error' };
}

/** The one error handler: every failure leaves as `{error: {code, name, message, field?}}`; 5xx never leak details. */
export function registerErrorHandler(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError, request, reply) => {
    const { name, message, field } = classify(error);
    const { status } = errorSpec(name);
    if (status >= 500) request.log.error({ err: error }, 'request failed');
    else request.log.info({ code: name, reason: message }, 'request refused');
    void reply.status(status).send(errorBody(name, message, field));
  });
  app.setNotFoundHandler((request, reply) => {
    void reply
      .status(404)
      .send(errorBody('not_found', `no route ${request.method} ${request.url.split('?')[0]}`));
  });
}

/**
 * Fastify's `frameworkErrors`: router failures before any route or hook runs (a path parameter over
 * `MAX_PARAM_LENGTH`, 414; a URL whose percent-encoding does not decode, 400), in the service's error
 * shape instead of Fastify's own `{statusCode, code, error, message}`.
 */
export function frameworkErrors(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  const { name, message, field } = classify(error);
  request.log.info({ code: name, reason: message }, 'request refused');
  void reply.status(errorSpec(name).status).send(errorBody(name, message, field));
}
