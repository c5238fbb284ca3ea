import type { FastifyError, FastifyInstance, FastifySchemaValidationError } from 'fastify';
import type { SchemaErrorDataVar } from 'fastify/types/schema.js';

/**
 * Ajv's type coercion turns a numeric string too long for a double ("9" x 700, "1e400") into
 * Infinity and then skips `minimum`/`maximum` for it: its range checks only look at finite numbers
 * (ajv 8.20). A schema's bounds therefore do not hold for such strings, and a handler passes Infinity
 * on (PostgreSQL then fails on it: a 500). JSON itself cannot carry Infinity past a numeric schema,
 * but `JSON.parse('1e400')` is Infinity too, so every validated input is checked, after validation.
 */
export function refuseNonFiniteNumbers(app: FastifyInstance): void {
  app.addHook('preHandler', async (request) => {
    const inputs = [
      ['body', request.body],
      ['querystring', request.query],
      ['params', request.params],
    ] as const;
    for (const [context, value] of inputs) {
      const path = nonFinitePath(value);
      if (path !== undefined) throw validationError(context, path);
    }
  });
}

/** The JSON-pointer path of the first non-finite number in `value`, or undefined when there is none. */
export function nonFinitePath(value: unknown): string | undefined {
  // Iterative: a deeply nested body must not exhaust the stack.
  const pending: [unknown, string][] = [[value, '']];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const [item, path] = next;
    if (typeof item === 'number') {
      if (!Number.isFinite(item)) return path;
    } else if (item !== null && typeof item === 'object') {
      for (const [key, child] of Object.entries(item)) pending.push([child, `${path}/${key}`]);
    }
  }
  return undefined;
}

/** The error Fastify's own validation raises, so each service's handler renders it in its own shape. */
function validationError(context: SchemaErrorDataVar, path: string): FastifyError {
  const message = 'must be a finite number';
  const detail: FastifySchemaValidationError = {
    keyword: 'type',
    instancePath: path,
    schemaPath: '#',
    params: {},
    message,
  };
  return Object.assign(new Error(`${context}${path} ${message}`), {
    name: 'FastifyError',
    code: 'FST_ERR_VALIDATION',
    statusCode: 400,
    validation: [detail],
    validationContext: context,
  });
}
