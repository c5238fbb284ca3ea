import { parseJsonKeepingNumberText, refusePrototypeKeys } from '@platform/decimal-text/json-numbers';
import type { FastifyInstance } from 'fastify';

declare module 'fastify' {
  interface FastifyRequest {
    /** The request body exactly as received: signatures are computed over these bytes. */
    rawBody?: Buffer;
  }
}

export interface RawJsonBodyOptions {
  /** The service's own error for a body that is not JSON (rendered by its error handler). */
  readonly malformed: (message: string) => Error;
}

/**
 * Replaces Fastify's JSON parser with one that keeps the raw bytes on `request.rawBody` (signatures
 * are verified over them, never over re-serialised JSON) and reports malformed JSON as the service's
 * error. Numbers count by their text: one a double does not hold exactly (`1e0`, `0.99999999999999999`)
 * becomes the string of its text, and a key repeated in one object is malformed JSON
 * (@platform/decimal-text/json-numbers). An empty body is the empty object, the way clients sign a POST without parameters. The
 * text/plain parser is removed too: a service accepts JSON (and what else it registers) only, anything
 * else is a 415.
 */
export function registerRawJsonBody(app: FastifyInstance, options: RawJsonBodyOptions): void {
  app.removeContentTypeParser(['application/json', 'text/plain']);
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    const raw = body as Buffer;
    request.rawBody = raw;
    if (raw.length === 0 || /^\s*$/.test(raw.toString('utf8'))) {
      done(null, {});
      return;
    }
    try {
      done(null, parseJsonKeepingNumberText(raw.toString('utf8'), refusePrototypeKeys));
    } catch (error) {
      done(options.malformed(`request body is not valid JSON: ${(error as Error).message}`), undefined);
    }
  });
}
