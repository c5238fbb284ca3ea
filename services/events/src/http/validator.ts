/**
 * Schema validation of requests with Ajv. Two instances, because the parts differ:
 * - bodies are checked as sent: no type coercion, unknown properties refused (not stripped), no defaults;
 * - path and query strings are text, so numbers are coerced (`limit=10`) and defaults applied.
 * All errors are collected so the 400 lists every problem at once; the body size limit and the
 * length limits in the schemas bound the work. `date-time` and `uri` use this service's stricter rules;
 * `list-cursor` is a `GET /events` cursor (`decodeCursor`).
 */
import { Ajv, type Options } from 'ajv';
import type { FastifySchemaCompiler } from 'fastify';
import { isFullIsoDateTime, isHttpUrl } from '../domain/event.js';
import { isCursor } from '../domain/pagination.js';

function createAjv(options: Options): Ajv {
  const ajv = new Ajv({ allErrors: true, strict: false, removeAdditional: false, ...options });
  ajv.addFormat('date-time', { type: 'string', validate: isFullIsoDateTime });
  ajv.addFormat('uri', { type: 'string', validate: isHttpUrl });
  ajv.addFormat('list-cursor', { type: 'string', validate: isCursor });
  return ajv;
}

export function createValidatorCompiler(): FastifySchemaCompiler<object> {
  const bodies = createAjv({ coerceTypes: false, useDefaults: false });
  const strings = createAjv({ coerceTypes: true, useDefaults: true });
  return ({ schema, httpPart }) => (httpPart === 'body' ? bodies : strings).compile(schema);
}
