import type { GraphQLError } from 'graphql';
import { createGraphQLError } from 'graphql-yoga';
import type { BlogFailure, Outcome } from '../domain/errors.js';
import type { BlogState } from '../domain/model.js';
import type { IdempotencyKeyRecord, PendingRecord } from '../idempotency/guard.js';
import type { GraphQLRequestParts } from '../idempotency/request-hash.js';
import type { ListBudget } from '../limits/list-budget.js';
import { type BlogStore, StoreWriteError } from '../store/file-store.js';

export interface BlogContext {
  readonly store: BlogStore;
  /** True when the request carried the configured bearer token. */
  readonly authenticated: boolean;
  /** True when the request carried an Authorization header at all (valid or not). */
  readonly sentCredentials: boolean;
  readonly now: () => number;
  /** Set when the request carries an Idempotency-Key: the record is reserved with the mutation. */
  readonly idempotency?: PendingRecord | undefined;
  /** The `idempotencyKey` query: what became of a key sent with this request's credentials. */
  readonly idempotencyKey?: (key: string, request: GraphQLRequestParts) => Promise<IdempotencyKeyRecord>;
  /** List items this request may still resolve (QUERY_MAX_LIST_ITEMS), set by the limits plugin. */
  readonly listBudget?: ListBudget;
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
  // Reserved in the same journal line as the mutation's changes: a crash can no longer separate
  // "executed" from "recorded". Once per request (a document with several mutations reserves once).
  const pending = context.idempotency;
  const reserve =
    pending && !pending.reserved
      ? { key: pending.recordKey, record: { ...pending.record, body: null, storedAt: context.now() } }
      : undefined;
  const outcome = await mutateStore(context.store, change, reserve);
  if (!outcome.ok) throw toGraphQLError(outcome);
  if (pending) pending.reserved = true;
  return outcome.value;
}

export const STORE_UNAVAILABLE_MESSAGE =
  'The blog could not write to its data files (disk full or failing): nothing of this request was kept. Retry later.';

/** Errors of the journal's file system: the change was not kept, and may be taken again later. */
const WRITE_FAILURE_CODES = new Set(['ENOSPC', 'EDQUOT', 'EIO', 'EROFS', 'EFBIG']);

function isWriteFailure(error: unknown): boolean {
  if (error instanceof StoreWriteError) return true;
  const code = (error as NodeJS.ErrnoException | null)?.code;
  return typeof code === 'string' && WRITE_FAILURE_CODES.has(code);
}

/**
 * The store's change, with a journal that could not be written answered as the blog's
 * `STORE_UNAVAILABLE` error instead of graphql-yoga's masked "Unexpected error.": the client (and
 * the proxy's replay, which retries it with backoff) can tell "nothing was kept, try again" from a bug.
 */
async function mutateStore<T>(
  store: BlogStore,
  change: (draft: BlogState) => Outcome<T>,
  reserve: Parameters<BlogStore['mutate']>[1],
): Promise<Outcome<T>> {
  try {
    return await store.mutate(change, reserve);
  } catch (error) {
    if (!isWriteFailure(error)) throw error;
    return {
      ok: false,
      code: 'STORE_UNAVAILABLE',
      message: STORE_UNAVAILABLE_MESSAGE,
    };
  }
}
