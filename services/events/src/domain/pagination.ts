/**
 * Page arithmetic and the RFC 8288 `Link` header of `GET /events`. Pure.
 * `page` starts at 1; `limit` is 1-100 (spec: default and maximum 100).
 */

export const PAGE_DEFAULTS = { page: 1, limit: 100, maxLimit: 100, maxPage: 1_000_000 } as const;

export interface PageRequest {
  page: number;
  limit: number;
}

export function offsetOf(request: PageRequest): number {
  return (request.page - 1) * request.limit;
}

export function lastPage(total: number, limit: number): number {
  return Math.max(1, Math.ceil(total / limit));
}

/**
 * `Link` header with `first`, `prev`, `next` and `last` relations; targets are relative references
 * (RFC 3986 section 4.2) to `path`, so they hold behind any host or proxy.
 */
export function linkHeader(path: string, request: PageRequest, total: number): string {
  const last = lastPage(total, request.limit);
  const target = (page: number): string => `<${path}?page=${page}&limit=${request.limit}>`;
  const links = [`${target(1)}; rel="first"`];
  if (request.page > 1) links.push(`${target(Math.min(request.page - 1, last))}; rel="prev"`);
  if (request.page < last) links.push(`${target(request.page + 1)}; rel="next"`);
  links.push(`${target(last)}; rel="last"`);
  return links.join(', ');
}

/** How to read one page from an ordered index: from the start, or from the end and reversed. */
export interface IndexWindow {
  direction: 'forward' | 'backward';
  /** Index entries skipped in that direction. */
  skip: number;
  /** Entries read after skipping. */
  take: number;
}

/**
 * The cheaper way to read rows `offset`..`offset + limit` of `total` ordered rows: an index walk
 * skips entries one by one, so a page in the second half is read backwards from the end. The
 * deepest page then costs what the first does; the middle one is the most expensive (total / 2
 * entries skipped, half of what a forward-only walk costs for the last page). Null: past the end.
 */
export function indexWindow(total: number, offset: number, limit: number): IndexWindow | null {
  if (offset >= total) return null;
  const take = Math.min(limit, total - offset);
  const fromEnd = total - offset - take;
  return fromEnd < offset
    ? { direction: 'backward', skip: fromEnd, take }
    : { direction: 'forward', skip: offset, take };
}
