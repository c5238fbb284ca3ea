import { AjvCompiler } from '@fastify/ajv-compiler';
import type { FastifyInstance, FastifySchema } from 'fastify';
import { describeSchemaErrors } from './schema-errors.js';

/**
 * Validates request bodies without type coercion; the query, path and headers keep Fastify's usual
 * coercion (their values are text by nature).
 *
 * Fastify's default Ajv coerces every part (`coerceTypes: 'array'`): for a body field typed number it
 * turns `"0x1"`, `"1e0"`, `true` and `[1]` into 1 (JavaScript's `Number()` reads the text), so a
 * schema saying "number or string" handed a route a number the client never wrote. A JSON body has
 * real types: a number field takes a JSON number, a string field a string, and amounts that may be
 * either are read from their text by @platform/decimal-text. A form body (all strings) meets the same
 * schemas: the v2 form routes type their fields as strings.
 */
export function registerStrictBodyValidation(app: FastifyInstance): void {
  const pool = AjvCompiler();
  const strict = pool({}, { customOptions: { coerceTypes: false } });
  const coercing = pool({}, { customOptions: {} });
  app.setValidatorCompiler<FastifySchema>((route) => (route.httpPart === 'body' ? strict : coercing)(route));
}

/** A validation failure of `strictBodyValidator`: Ajv's message, as Fastify reports a body's. */
export type BodyCheck = { readonly ok: true } | { readonly ok: false; readonly message: string };

/**
 * The check `registerStrictBodyValidation` gives a route's body, for a body that arrives another way
 * than HTTP (the exchange's WebSocket order entry takes the REST routes' bodies): the same Ajv, the
 * same options, no coercion.
 */
export function strictBodyValidator(schema: object): (body: unknown) => BodyCheck {
  const compile = AjvCompiler()({}, { customOptions: { coerceTypes: false } });
  const validate = compile({ schema, method: 'POST', url: '', httpPart: 'body' });
  return (body) => {
    if (validate(body)) return { ok: true };
    // the wording of the HTTP routes (edgeServerOptions' schemaErrorFormatter)
    return { ok: false, message: describeSchemaErrors(validate.errors ?? [], 'body') };
  };
}
