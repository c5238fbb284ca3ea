import { createHash } from 'node:crypto';
import { stripIgnoredCharacters } from 'graphql';

/**
 * The identity of a GraphQL request for the `idempotencyKey` question (issue 41): the document with
 * its ignored characters removed (whitespace, commas, comments), the operation name, and the
 * variables serialised with sorted keys. A replay asking about its key names the mutation it holds;
 * a record of another mutation under that key (another operation or other variables) is not its
 * answer. The same request sent with other spacing or key order has the same hash.
 */

/**
 * Deeper values are not hashed: the query limits refuse variables nested deeper than
 * REQUEST_MAX_JSON_DEPTH (at most this) before anything runs, so such a request never has a record.
 */
const MAX_DEPTH = 256;

class TooDeep extends Error {}

/** JSON with object keys sorted at every level (arrays keep their order). */
function canonical(value: unknown, depth = 0): string {
  if (depth > MAX_DEPTH) throw new TooDeep();
  if (Array.isArray(value)) return `[${value.map((item) => canonical(item, depth + 1)).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, item]) => item !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([name, item]) => `${JSON.stringify(name)}:${canonical(item, depth + 1)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

function normalisedDocument(query: string): string {
  try {
    return stripIgnoredCharacters(query);
  } catch {
    return query; // not GraphQL: compared as written
  }
}

export interface GraphQLRequestParts {
  readonly query: string;
  readonly variables?: unknown;
  readonly operationName?: unknown;
}

/** The hash, or undefined for variables nested deeper than any request that runs may have. */
export function operationHash(request: GraphQLRequestParts): string | undefined {
  const variables = request.variables ?? {};
  const operationName =
    typeof request.operationName === 'string' && request.operationName !== '' ? request.operationName : null;
  let text: string;
  try {
    text = canonical([normalisedDocument(request.query), operationName, variables]);
  } catch (error) {
    if (error instanceof TooDeep) return undefined;
    throw error;
  }
  return createHash('sha256').update(text).digest('hex');
}

/** The request parts of a POST body, or undefined when it is not a GraphQL request with a query. */
export function requestPartsOf(body: string): GraphQLRequestParts | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return undefined;
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) return undefined;
  const { query, variables, operationName } = parsed as Record<string, unknown>;
  return typeof query === 'string' ? { query, variables, operationName } : undefined;
}
