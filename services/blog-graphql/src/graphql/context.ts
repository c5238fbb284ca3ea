import type { GraphQLError } from 'graphql';
import { createGraphQLError } from 'graphql-yoga';
import type { BlogFailure, Outcome } from '../domain/errors.js';
import type { BlogState } from '../domain/model.js';
import type { BlogStore } from '../store/file-store.js';

export interface BlogContext {
  readonly store: BlogStore;
  /** True when the request carried the configured bearer token. */
  readonly authenticated: boolean;
  /** True when the request carried an Authorization header at all (valid or not). */
  readonly sentCredentials: boolean;
  readonly now: () => number;
}

export function toGraphQLError(failure: BlogFailure): GraphQLError {
  // graphql-yoga's factory, so the error is an instance of the GraphQLError yoga checks when masking.
  return createGraphQLError(failure.message, { extensions: { code: failure.code } });
}

/** Runs a state change for a mutation resolver: checks the token, applies it atomically, throws on failure. */
export async function mutateOrThrow<T>(
  context: BlogContext,
  change: (draft: BlogState) => Outcome<T>,
): Promise<T> {
  if (!context.authenticated) {
    throw toGraphQLError({
      ok: false,
      code: context.sentCredentials ? 'FORBIDDEN' : 'UNAUTHENTICATED',
      message: context.sentCredentials
        ? 'The bearer token is not valid for mutations'
        : 'Mutations require an Authorization: Bearer <token> header',
    });
  }
  const outcome = await context.store.mutate(change);
  if (!outcome.ok) throw toGraphQLError(outcome);
  return outcome.value;
}
