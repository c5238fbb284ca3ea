import type { BlogContext } from '../graphql/context.js';
import { STORE_UNAVAILABLE_MESSAGE, toGraphQLError } from '../graphql/context.js';

/**
 * `idempotencyKey(key, query, variables, operationName)`: what the blog knows of a request sent with
 * an `Idempotency-Key`, asked with the same credentials (keys are scoped by them) and naming the
 * request the asker holds under that key. The GraphQL proxy asks it before replaying a queued
 * mutation whose previous replayer died after sending it and before recording the answer, so the
 * mutation is not sent a second time: an applied key's stored answer is taken instead. A record of
 * another request under that key (another operation or other variables: issue 41) is never given as
 * its answer; the question is answered `IDEMPOTENCY_KEY_REUSED`, as a repeat with another body is.
 * Kept out of the WPGraphQL-shaped `typeDefs` (the proxy runs those over its local copy), as an
 * extension.
 */
export const idempotencyTypeDefs = /* GraphQL */ `
  enum IdempotencyKeyState {
    "Executed; its answer is stored and given in response."
    APPLIED
    "Executed; the process died before its answer was stored (a repeat gets IDEMPOTENT_ANSWER_LOST)."
    ANSWER_LOST
    "No request with this key changed anything (never arrived, failed, was a query, or its record expired)."
    NOT_APPLIED
  }

  type IdempotencyKeyRecord {
    key: String!
    state: IdempotencyKeyState!
    "The stored answer of an applied request (JSON text, as it was sent)."
    response: String
    "Requests with this key (and these credentials) that reached this process since it started."
    arrivals: Int!
  }

  extend type RootQuery {
    """
    What became of a request sent with this Idempotency-Key and the caller's credentials. query,
    variables (JSON text) and operationName are the request held under the key: the record must be
    of that request (compared after removing ignored characters and sorting the variables' keys).
    """
    idempotencyKey(key: String!, query: String!, variables: String, operationName: String): IdempotencyKeyRecord!
  }
`;

interface LookupArgs {
  readonly key: string;
  readonly query: string;
  readonly variables?: string | null;
  readonly operationName?: string | null;
}

function parseVariables(text: string | null | undefined): unknown {
  if (text == null || text === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    throw toGraphQLError({ ok: false, code: 'BAD_USER_INPUT', message: 'variables must be JSON text' });
  }
}

export const idempotencyResolvers = {
  RootQuery: {
    idempotencyKey: async (_: unknown, args: LookupArgs, context: BlogContext) => {
      const request = {
        query: args.query,
        variables: parseVariables(args.variables),
        operationName: args.operationName ?? undefined,
      };
      const record = (await context.idempotencyKey?.(args.key, request)) ?? {
        state: 'NOT_APPLIED' as const,
        response: null,
        arrivals: 0,
      };
      if (record.state === 'STORE_UNAVAILABLE') {
        throw toGraphQLError({ ok: false, code: 'STORE_UNAVAILABLE', message: STORE_UNAVAILABLE_MESSAGE });
      }
      if (record.state === 'OTHER_REQUEST') {
        throw toGraphQLError({
          ok: false,
          code: 'IDEMPOTENCY_KEY_REUSED',
          message:
            'This Idempotency-Key was used with another request (another operation or other variables)',
        });
      }
      return { key: args.key, ...record };
    },
  },
};
