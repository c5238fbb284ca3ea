import { createHash } from 'node:crypto';

/**
 * The cache key: sha256 of the normalised document, the operation name, the variables serialised
 * with sorted keys, and the caller's authorization scope, so that `{a,b}` and `{b,a}` share an entry
 * and one caller's private answer is never served to another.
 */

export function stableStringify(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map((item) => stableStringify(item)).join(',')}]`;
  const entries = Object.keys(value)
    .filter((key) => (value as Record<string, unknown>)[key] !== undefined)
    .sort()
    .map((key) => `${JSON.stringify(key)}:${stableStringify((value as Record<string, unknown>)[key])}`);
  return `{${entries.join(',')}}`;
}

/** The scope of a request: `public` without credentials, else a hash of the Authorization header. */
export function authorizationScope(authorization: string | undefined): string {
  if (authorization === undefined || authorization === '') return 'public';
  return createHash('sha256').update(authorization).digest('hex').slice(0, 32);
}

export function cacheKey(
  normalisedDocument: string,
  operationName: string | null,
  variables: unknown,
  scope: string,
): string {
  const variablesText = variables === undefined || variables === null ? '{}' : stableStringify(variables);
  return createHash('sha256')
    .update(normalisedDocument)
    .update('\n')
    .update(operationName ?? '')
    .update('\n')
    .update(variablesText)
    .update('\n')
    .update(scope)
    .digest('hex');
}
