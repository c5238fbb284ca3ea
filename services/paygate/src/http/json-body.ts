import type { FastifyInstance } from 'fastify';
import { ApiError } from '../errors.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The exact bytes of a JSON body: merchant signatures are verified over them. */
    rawBody?: Buffer;
  }
}

/** Refuses `__proto__` and `constructor.prototype` keys, as Fastify's own parser does. */
function refusePoisoning(key: string, value: unknown): unknown {
  if (key === '__proto__') throw new Error('the key "__proto__" is not allowed');
  if (key === 'constructor' && value !== null && typeof value === 'object' && 'prototype' in value) {
    throw new Error('the key "constructor.prototype" is not allowed');
  }
  return value;
}

/**
 * A JSON parser that keeps the raw bytes (signatures are checked over them, never over
 * re-serialised JSON) and reports malformed JSON in the service's error shape.
 */
export function registerJsonBody(app: FastifyInstance): void {
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
