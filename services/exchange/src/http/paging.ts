import type { FastifyReply } from 'fastify';

/**
 * Paging of list routes whose body is a bare JSON array (the spec's shapes, which existing clients
 * parse): the page itself stays the array, and what a client needs to go on travels in headers.
 *
 * - `x-has-more: true|false` on every paged answer: whether rows beyond this page exist.
 * - the way to the next page, when there is one: `x-next-before-id` (v3, keyset: pass it as
 *   `before_id`) or `x-next-page` (v2, Peatio's `page`).
 */
export const HAS_MORE = 'x-has-more';
export const NEXT_BEFORE_ID = 'x-next-before-id';
export const NEXT_PAGE = 'x-next-page';

/** The first `limit` rows of a read of `limit + 1`, and whether the extra row showed there are more. */
export function pageOf<T>(
  rows: readonly T[],
  limit: number,
): { readonly items: T[]; readonly more: boolean } {
  return { items: rows.slice(0, limit), more: rows.length > limit };
}

/** Sets `x-has-more`, and `next` (header name and value) when there are more rows. */
export function announcePage(
  reply: FastifyReply,
  more: boolean,
  next: readonly [string, string | number],
): void {
  reply.header(HAS_MORE, String(more));
  if (more) reply.header(next[0], String(next[1]));
}
