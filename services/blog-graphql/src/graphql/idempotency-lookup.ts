import type { BlogContext } from './context.js';

/**
 * `idempotencyKey(key)`: what the blog knows of a request sent with an `Idempotency-Key`, asked with
 * the same credentials (keys are scoped by them). The GraphQL proxy asks it before replaying a queued
 * mutation whose previous replayer died after sending it and before recording the answer, so the
 * mutation is not sent a second time: an applied key's stored answer is taken instead. Kept out of
 * the WPGraphQL-shaped `typeDefs` (the proxy runs those over its local copy), as an extension.
 */
export const idempotencyTypeDefs = /* GraphQL */ `
  enum IdempotencyKeyState {
    "Executed; its answer is stored and given in response."
    APPLIED
    "Executed; the process died before its answer was stored (a repeat gets IDEMPOTENT_ANSWER_LOST)."
    ANSWER_LOST
    "No request with this key changed anything (never arrived, failed, or its record expired)."
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
    "What became of a request sent with this Idempotency-Key and the caller's credentials."
    idempotencyKey(key: String!): IdempotencyKeyRecord!
  }
`;

export const idempotencyResolvers = {
  RootQuery: {
    idempotencyKey: async (_: unknown, args: { key: string }, context: BlogContext) => {
      const record = await context.idempotencyKey?.(args.key);
      return { key: args.key, ...(record ?? { state: 'NOT_APPLIED', response: null, arrivals: 0 }) };
    },
  },
};
