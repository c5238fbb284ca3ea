/** The closed set of failures the blog reports; they become GraphQL errors with `extensions.code`. */
export type BlogErrorCode =
  | 'BAD_USER_INPUT'
  | 'NOT_FOUND'
  | 'UNAUTHENTICATED'
  | 'FORBIDDEN'
  | 'IDEMPOTENCY_KEY_REUSED'
  | 'IDEMPOTENT_ANSWER_LOST'
  /** The change could not be written to the journal (disk full, I/O error): nothing was kept; retry later. */
  | 'STORE_UNAVAILABLE';

export interface BlogFailure {
  readonly ok: false;
  readonly code: BlogErrorCode;
  readonly message: string;
}

export type Outcome<T> = { readonly ok: true; readonly value: T } | BlogFailure;

export function ok<T>(value: T): Outcome<T> {
  return { ok: true, value };
}

export function fail(code: BlogErrorCode, message: string): BlogFailure {
  return { ok: false, code, message };
}
