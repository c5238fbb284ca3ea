import { type Refusal, refusalExtensions } from '@platform/graphql-limits/limits';
import { graphqlErrorBody } from '../errors.js';

/**
 * A refused request in the proxy's GraphQL error shape: HTTP 200 (as every GraphQL-level error on
 * POST /graphql, README "Errors"), `errors[0].extensions.code` QUERY_LIMIT_EXCEEDED with `limit`,
 * `measured` and `max` (or GRAPHQL_VALIDATION_FAILED for a fragment cycle), never cached.
 */
export function refusalAnswer(refusal: Refusal): { headers: Record<string, string>; body: string } {
  const { code, ...extra } = refusalExtensions(refusal);
  return {
    headers: { 'cache-control': 'no-store' },
    body: graphqlErrorBody(refusal.code, refusal.message, extra),
  };
}
