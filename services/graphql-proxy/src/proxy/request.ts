import { PersistedQueries } from '../graphql/persisted.js';

/**
 * A GraphQL request body (POST JSON or GET parameters) checked and resolved: the query text comes
 * from `query`, or, with the Apollo `persistedQuery` extension, from its sha256 (remembered when a
 * body carried both, after checking that the hash matches). Batched arrays are not supported.
 */

export type ParsedRequest =
  | {
      readonly ok: true;
      readonly query: string;
      readonly variables: Record<string, unknown> | null;
      readonly operationName: string | null;
      /** The sha256 of a query sent with its hash: remembered by the caller once the query is accepted. */
      readonly persist?: string;
    }
  | {
      readonly ok: false;
      readonly code: 'BAD_REQUEST' | 'PERSISTED_QUERY_NOT_FOUND';
      readonly message: string;
    };

const bad = (message: string): ParsedRequest => ({ ok: false, code: 'BAD_REQUEST', message });

export function parseRequest(body: unknown, persisted: PersistedQueries): ParsedRequest {
  if (Array.isArray(body)) {
    return bad(
      'Batched requests (a JSON array of operations) are not supported; send one operation per request',
    );
  }
  if (body === null || typeof body !== 'object')
    return bad('The body must be a JSON object with a "query" string');
  const { query, variables, operationName, extensions } = body as Record<string, unknown>;
  if (
    variables !== undefined &&
    variables !== null &&
    (typeof variables !== 'object' || Array.isArray(variables))
  ) {
    return bad('"variables" must be an object');
  }
  if (operationName !== undefined && operationName !== null && typeof operationName !== 'string') {
    return bad('"operationName" must be a string');
  }
  const resolved = queryText(query, extensions, persisted);
  if (typeof resolved !== 'string' && !('persist' in resolved)) return resolved;
  return {
    ok: true,
    query: typeof resolved === 'string' ? resolved : resolved.query,
    variables: (variables as Record<string, unknown> | null | undefined) ?? null,
    operationName: (operationName as string | null | undefined) ?? null,
    ...(typeof resolved === 'string' ? {} : { persist: resolved.persist }),
  };
}

function queryText(
  query: unknown,
  extensions: unknown,
  persisted: PersistedQueries,
): string | { query: string; persist: string } | ParsedRequest {
  const extension =
    extensions !== null && typeof extensions === 'object'
      ? (extensions as Record<string, unknown>)['persistedQuery']
      : undefined;
  const hasQuery = typeof query === 'string' && query.trim() !== '';
  if (extension === undefined || extension === null) {
    return hasQuery ? (query as string) : bad('The body must carry a "query" string');
  }
  const { version, sha256Hash } = extension as Record<string, unknown>;
  if (version !== 1 || typeof sha256Hash !== 'string' || !/^[0-9a-f]{64}$/i.test(sha256Hash)) {
    return bad('extensions.persistedQuery must be {version: 1, sha256Hash: <64 hex digits>}');
  }
  const hash = sha256Hash.toLowerCase();
  if (query === undefined || query === null) {
    const known = persisted.get(hash);
    // Apollo clients recognise this exact message and code, and resend with the query text.
    if (known === undefined) {
      return { ok: false, code: 'PERSISTED_QUERY_NOT_FOUND', message: 'PersistedQueryNotFound' };
    }
    return known;
  }
  if (!hasQuery) return bad('The body must carry a "query" string');
  if (PersistedQueries.hash(query as string) !== hash) return bad('provided sha does not match query');
  // Remembered by the handler once the query passed the limits (issue 28: a refused query touches no store).
  return { query: query as string, persist: hash };
}
