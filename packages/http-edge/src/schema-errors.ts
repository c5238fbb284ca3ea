import type { FastifySchemaValidationError } from 'fastify';
import type { SchemaErrorDataVar } from 'fastify/types/schema.js';

/**
 * Ajv's failures as one readable sentence per field, in Fastify's wording (`body/amount must be
 * string`), with its two unreadable cases rewritten:
 *
 * - a choice (`anyOf`/`oneOf`) is reported by Ajv as every branch's failure and then "must match a
 *   schema in anyOf": `body/type must be equal to constant, body/type must be equal to constant, ...,
 *   body/type must match a schema in anyOf`. It becomes one line saying what the branches accept:
 *   `body/type must be one of limit, market, stop_limit` when each branch is a constant, else the
 *   branches joined by "or" (`body/order_id must be integer or must match pattern "^[0-9]{1,15}$"`),
 *   or the failure all branches share (`querystring/resolution must be string` for a repeated key);
 * - `enum` ("must be equal to one of the allowed values") names the allowed values.
 *
 * Only the text changes: the failures themselves (`error.validation`) stay Ajv's.
 */
export function describeSchemaErrors(
  errors: readonly FastifySchemaValidationError[],
  dataVar: string,
): string {
  const choices = errors.filter((error) => error.keyword === 'anyOf' || error.keyword === 'oneOf');
  const branchOf = (error: FastifySchemaValidationError) =>
    choices.find((choice) => choice !== error && error.schemaPath.startsWith(`${choice.schemaPath}/`));
  const lines: string[] = [];
  for (const error of errors) {
    if (branchOf(error) !== undefined) continue; // said by its choice's line
    const text = choices.includes(error)
      ? describeChoice(
          error,
          errors.filter((other) => branchOf(other) === error),
        )
      : describeOne(error);
    const line = `${dataVar}${error.instancePath} ${text}`;
    if (!lines.includes(line)) lines.push(line);
  }
  return lines.join(', ') || `${dataVar} is invalid`;
}

/** The formatter to give Fastify (`schemaErrorFormatter`): the same sentence as an Error. */
export function schemaErrorFormatter(
  errors: FastifySchemaValidationError[],
  dataVar: SchemaErrorDataVar,
): Error {
  return new Error(describeSchemaErrors(errors, dataVar));
}

function describeChoice(
  choice: FastifySchemaValidationError,
  branches: readonly FastifySchemaValidationError[],
): string {
  if (branches.length === 0) return choice.message ?? 'is invalid';
  if (branches.every((branch) => branch.keyword === 'const' && branch.instancePath === choice.instancePath)) {
    const values = branches.map((branch) => shown(branch.params['allowedValue']));
    return `must be one of ${[...new Set(values)].join(', ')}`;
  }
  // One text per branch (the failures of one branch joined by "and"), in the schema's order.
  const byBranch = new Map<string, string[]>();
  for (const branch of branches) {
    const index = branch.schemaPath.slice(choice.schemaPath.length + 1).split('/')[0] ?? '';
    const below = branch.instancePath.slice(choice.instancePath.length);
    const text = `${below ? `${below.slice(1)} ` : ''}${describeOne(branch)}`;
    const texts = byBranch.get(index) ?? [];
    if (!texts.includes(text)) texts.push(text);
    byBranch.set(index, texts);
  }
  // A failure every branch has is the one to fix (a repeated query key is an array: "must be
  // string" in each branch, beside each branch's constant).
  const branchTexts = [...byBranch.values()];
  const common = branchTexts[0]?.filter((text) => branchTexts.every((texts) => texts.includes(text))) ?? [];
  if (common.length > 0) return common.join(' and ');
  const alternatives = branchTexts.map((texts) => texts.join(' and '));
  return [...new Set(alternatives)].join(' or ');
}

function describeOne(error: FastifySchemaValidationError): string {
  if (error.keyword === 'const') return `must be ${shown(error.params['allowedValue'])}`;
  if (error.keyword === 'enum' && Array.isArray(error.params['allowedValues'])) {
    return `must be one of ${(error.params['allowedValues'] as unknown[]).map(shown).join(', ')}`;
  }
  return error.message ?? 'is invalid';
}

/** A schema value as a client would write it: text as it is, anything else as JSON. */
function shown(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}
