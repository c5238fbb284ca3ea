import type { FastifyError, FastifyInstance, FastifySchemaValidationError } from 'fastify';
import type { SchemaErrorDataVar } from 'fastify/types/schema.js';

/**
 * Refuses, after validation, input that no schema keyword stops but the database cannot store:
 *
 * - A number that is not finite. Ajv's type coercion turns a numeric string too long for a double
 *   ("9" x 700, "1e400") into Infinity and then skips `minimum`/`maximum` for it: its range checks
 *   only look at finite numbers (ajv 8.20). A schema's bounds therefore do not hold for such strings,
 *   and PostgreSQL fails on "Infinity" (a 500). Checked in the body, the query and the path.
 * - A NUL character in a body string: PostgreSQL text cannot hold U+0000 (error 22021, a 500). Only
 *   bodies: a query or path NUL is the concern of the route (an HTML page answers it with its own 404).
 * - An unpaired surrogate in a body string (JSON's `"\ud800"` escape): UTF-8 cannot carry it, so
 *   the driver's encoding stored U+FFFD in its place and the answer showed another text than the
 *   one sent. Refused like the NUL, so what is stored is always what was sent.
 */
export function refuseUnstorableInput(app: FastifyInstance): void {
  app.addHook('preHandler', async (request) => {
    const inputs = [
      ['body', request.body, true],
      ['querystring', request.query, false],
      ['params', request.params, false],
    ] as const;
    for (const [context, value, stringsToo] of inputs) {
      const found = unstorableValue(value, stringsToo);
      if (found !== undefined) throw validationError(context, found.path, found.message);
    }
  });
}

export interface UnstorableValue {
  /** JSON-pointer path of the value. */
  readonly path: string;
  readonly message: string;
}

/** A UTF-16 code unit of a surrogate pair standing alone (in `u` mode a pair is one code point). */
const UNPAIRED_SURROGATE = /\p{Cs}/u;

/** Text PostgreSQL stores as it is: no NUL, no unpaired surrogate (for values outside a body, a token's claim). */
export function isStorableText(text: string): boolean {
  return !text.includes('\u0000') && !UNPAIRED_SURROGATE.test(text);
}

/**
 * The first non-finite number in `value` (and, with `stringsToo`, string holding a NUL or an
 * unpaired surrogate), if any.
 */
export function unstorableValue(value: unknown, stringsToo: boolean): UnstorableValue | undefined {
  // Iterative: a deeply nested body must not exhaust the stack.
  const pending: [unknown, string][] = [[value, '']];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const [item, path] = next;
    if (typeof item === 'number') {
      if (!Number.isFinite(item)) return { path, message: 'must be a finite number' };
    } else if (typeof item === 'string') {
      if (!stringsToo) continue;
      if (item.includes('\u0000')) return { path, message: 'must not contain a NUL character' };
      if (UNPAIRED_SURROGATE.test(item))
        return { path, message: 'must be valid Unicode text (it holds an unpaired surrogate)' };
    } else if (item !== null && typeof item === 'object') {
      for (const [key, child] of Object.entries(item)) pending.push([child, `${path}/${key}`]);
    }
  }
  return undefined;
}

/** The error Fastify's own validation raises, so each service's handler renders it in its own shape. */
function validationError(context: SchemaErrorDataVar, path: string, message: string): FastifyError {
  const detail: FastifySchemaValidationError = {
    // Not an Ajv keyword: a service's message table falls back to `message` for it.
    keyword: 'storable',
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
