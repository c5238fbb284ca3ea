import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { allowedMethods, allowHeader } from './allowed-methods.js';

/**
 * Fastify's `maxParamLength` for the services: a longer path parameter is refused by the router,
 * before any route (above every schema's maxLength, so those get their own 400 up to this length).
 */
export const MAX_PARAM_LENGTH = 500;

/** What went wrong at the HTTP edge, before or outside a route's own refusals. */
export type EdgeErrorKind =
  | 'validation_failed'
  | 'body_too_large'
  | 'unsupported_media_type'
  | 'uri_too_long'
  | 'not_found'
  | 'method_not_allowed'
  | 'internal';

export interface EdgeError {
  readonly kind: EdgeErrorKind;
  readonly message: string;
}

/** A failure as a service answers it: the status, its own body, and the name and reason it logs. */
export interface RenderedError {
  readonly status: number;
  readonly body: unknown;
  readonly name: string;
  readonly message: string;
}

/** How a service renders failures in its own error shape, from its own error registry. */
export interface ErrorMapping {
  /** The service's own error (its ApiError), rendered; undefined for anything else. */
  own(error: unknown): RenderedError | undefined;
  /** An edge failure (Fastify's framework errors, validation, unknown routes, bugs), rendered. */
  edge(error: EdgeError): RenderedError;
}

/** Fastify's own failures (router, body parsing, validation) as edge errors; anything else is internal. */
export function classifyEdgeError(error: FastifyError): EdgeError {
  if (error.validation) return { kind: 'validation_failed', message: error.message };
  switch (error.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return { kind: 'body_too_large', message: 'request body is larger than the limit' };
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return { kind: 'unsupported_media_type', message: error.message };
    case 'FST_ERR_MAX_PARAM_LENGTH':
      return {
        kind: 'uri_too_long',
        message: `a path parameter is longer than ${MAX_PARAM_LENGTH} characters`,
      };
    case 'FST_ERR_BAD_URL':
      return { kind: 'validation_failed', message: 'the URL is not valid (bad percent-encoding)' };
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return { kind: 'validation_failed', message: error.message };
  }
  if (error instanceof SyntaxError || (error.statusCode !== undefined && error.statusCode < 500)) {
    return { kind: 'validation_failed', message: error.message };
  }
  return { kind: 'internal', message: 'internal error' };
}

function render(mapping: ErrorMapping, error: FastifyError): RenderedError {
  return mapping.own(error) ?? mapping.edge(classifyEdgeError(error));
}

/**
 * The one error handler and the not-found handler: every failure leaves in the service's shape
 * (`mapping`); 5xx are logged with the error and never leak details (503s as warnings, briefly),
 * refusals are logged briefly.
 */
export function registerErrorHandlers(app: FastifyInstance, mapping: ErrorMapping): void {
  app.setErrorHandler((error: FastifyError, request, reply) => {
    const rendered = render(mapping, error);
    // A 503 is a documented, passing state (a market changing hands, a database out of reach), which
    // the client is told to retry: a warning with its reason, not an error with a stack per request.
    if (rendered.status === 503)
      request.log.warn({ code: rendered.name, reason: rendered.message }, 'request refused: unavailable');
    else if (rendered.status >= 500) request.log.error({ err: error }, 'request failed');
    else request.log.info({ code: rendered.name, reason: rendered.message }, 'request refused');
    void reply.status(rendered.status).send(rendered.body);
  });
  app.setNotFoundHandler((request, reply) => {
    // A known path with another method: 405 with `allow`, in the service's shape.
    const allowed = allowedMethods(request.server, request.url);
    if (allowed.length > 0) {
      const rendered = mapping.edge({
        kind: 'method_not_allowed',
        message: `${request.method} is not allowed on ${request.url.split('?')[0]}; allowed: ${allowHeader(allowed)}`,
      });
      void reply.status(rendered.status).header('allow', allowHeader(allowed)).send(rendered.body);
      return;
    }
    const rendered = mapping.edge({
      kind: 'not_found',
      message: `no route ${request.method} ${request.url.split('?')[0]}`,
    });
    void reply.status(rendered.status).send(rendered.body);
  });
}

/**
 * A handler for Fastify's `frameworkErrors` option: router failures before any route or hook runs
 * (a path parameter over `MAX_PARAM_LENGTH`, 414; a URL whose percent-encoding does not decode, 400),
 * in the service's shape instead of Fastify's own `{statusCode, code, error, message}`.
 */
export function frameworkErrorHandler(
  mapping: ErrorMapping,
): (error: FastifyError, request: FastifyRequest, reply: FastifyReply) => void {
  return (error, request, reply) => {
    const rendered = render(mapping, error);
    request.log.info({ code: rendered.name, reason: rendered.message }, 'request refused');
    void reply.status(rendered.status).send(rendered.body);
  };
}
