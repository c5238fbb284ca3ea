import {
  type ErrorMapping,
  frameworkErrorHandler,
  type RenderedError,
  registerErrorHandlers,
} from '@platform/http-edge/framework-errors';
import type { FastifyInstance } from 'fastify';
import { ApiError, type ErrorName, errorBody, errorSpec } from '../errors.js';

export { MAX_PARAM_LENGTH } from '@platform/http-edge/framework-errors';

function rendered(name: ErrorName, message: string, field?: string): RenderedError {
  return { status: errorSpec(name).status, body: errorBody(name, message, field), name, message };
}

/** The gateway's error shape `{error: {code, name, message, field?}}` over the shared edge handlers. */
const mapping: ErrorMapping = {
  own: (error) =>
    error instanceof ApiError ? rendered(error.errorName, error.message, error.field) : undefined,
  edge: ({ kind, message }) => rendered(kind, message),
};

/** The one error handler and the not-found handler (packages/http-edge framework-errors.ts). */
export function registerErrorHandler(app: FastifyInstance): void {
  registerErrorHandlers(app, mapping);
  // Fastify runs onError before the error handler: the place for an error's own headers.
  app.addHook('onError', async (_request, reply, error) => {
    if (error instanceof ApiError && error.retryAfterSeconds !== undefined) {
      void reply.header('retry-after', String(error.retryAfterSeconds));
    }
  });
}

/** Fastify's `frameworkErrors` option, in the gateway's error shape. */
export const frameworkErrors = frameworkErrorHandler(mapping);
