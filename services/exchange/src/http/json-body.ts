import type { FastifyInstance } from 'fastify';
import { ApiError } from '../errors.js';
import './request-context.js';

/** Refuses `__proto__` and `constructor.prototype` keys, as Fastify's own parser does. */
function refusePoisoning(key: string, value: unknown): unknown {
  if (key === '__proto__') throw new Error('the key "__proto__" is not allowed');
  if (key === 'constructor' && value !== null && typeof value === 'object' && 'prototype' in value) {
    throw new Error('the key "constructor.prototype" is not allowed');
  }
  return value;
}

/**
 * Replaces Fastify's JSON parser with one that keeps the raw bytes (signatures are verified over
 * them, never over re-serialised JSON) and reports malformed JSON in the service's error shape.
 * An empty body is the empty object, the way clients sign a POST without parameters.
 */
export function registerJsonBody(app: FastifyInstance): void {
  // JSON (v3) and forms (v2, registered in app.ts) only: anything else is a 415.
  app.removeContentTypeParser(['application/json', 'text/plain']);
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    const raw = body as Buffer;
    request.rawBody = raw;
    if (raw.length === 0 || /^\s*$/.test(raw.toString('utf8'))) {
      done(null, {});
      return;
    }
    try {
      done(null, JSON.parse(raw.toString('utf8'), refusePoisoning) as unknown);
    } catch (error) {
      done(
        new ApiError('malformed_json', `request body is not valid JSON: ${(error as Error).message}`),
        undefined,
      );
    }
  });
}
