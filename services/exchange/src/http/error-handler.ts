import {
  type ErrorMapping,
  frameworkErrorHandler,
  type RenderedError,
  registerErrorHandlers,
} from '@platform/http-edge/framework-errors';
import type { FastifyInstance } from 'fastify';
import { ApiError, type ErrorName, errorBody, errorSpec } from '../errors.js';

export { MAX_PARAM_LENGTH } from '@platform/http-edge/framework-errors';

function rendered(name: ErrorName, message: string): RenderedError {
  return { status: errorSpec(name).status, body: errorBody(name, message), name, message };
}

const CONNECTION_CODES = new Set(['ECONNRESET', 'ECONNREFUSED', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH']);

/**
 * The database went out of reach under the request (a cut connection, a server restarting): 503
 * `unavailable`, which a client may retry, rather than a 500 (a cluster node cut off from PostgreSQL).
 */
function databaseUnreachable(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && (CONNECTION_CODES.has(code) || /^(08|57P)/.test(code))) return true;
  return /Connection terminated|Client has encountered a connection error|connection timeout/i.test(
    error.message,
  );
}

/** The exchange's error shape `{error: {code, name, message}}` over the shared edge handlers. */
const mapping: ErrorMapping = {
  own: (error) => {
    if (error instanceof ApiError) return rendered(error.errorName, error.message);
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
