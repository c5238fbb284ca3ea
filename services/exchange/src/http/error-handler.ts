import {
  type ErrorMapping,
  frameworkErrorHandler,
  type RenderedError,
  registerErrorHandlers,
} from '@platform/http-edge/framework-errors';
import type { FastifyInstance } from 'fastify';
import { databaseUnreachable } from '../db/unreachable.js';
import { ApiError, type ErrorDetails, type ErrorName, errorBody, errorSpec } from '../errors.js';

export { MAX_PARAM_LENGTH } from '@platform/http-edge/framework-errors';

function rendered(name: ErrorName, message: string, details?: ErrorDetails): RenderedError {
  return { status: errorSpec(name).status, body: errorBody(name, message, details), name, message };
}

/** The exchange's error shape `{error: {code, name, message}}` over the shared edge handlers. */
const mapping: ErrorMapping = {
  own: (error) => {
    if (error instanceof ApiError) return rendered(error.errorName, error.message, error.details);
    if (databaseUnreachable(error))
      return rendered('unavailable', 'the database is out of reach; try again shortly');
    return undefined;
  },
  edge: ({ kind, message }) => rendered(kind, message),
};

/** The one error handler and the not-found handler (packages/http-edge framework-errors.ts). */
export function registerErrorHandler(app: FastifyInstance): void {
  registerErrorHandlers(app, mapping);
}

/** Fastify's `frameworkErrors` option, in the exchange's error shape. */
export const frameworkErrors = frameworkErrorHandler(mapping);
