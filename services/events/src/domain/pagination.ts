/**
 * Page arithmetic, keyset cursors and the RFC 8288 `Link` header of `GET /events`. Pure.
 * `page` starts at 1; `limit` is 1-100 (spec: default and maximum 100).
 */
import { isValidEventId } from './event.js';

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
 * A row's place in the list order: the instant its `date` denotes, in microseconds since the Unix
 * epoch (PostgreSQL's `timestamptz` precision, so the key is exact), then its `eventId`.
 */
export interface ListKey {
  atMicros: bigint;
  eventId: string;
}

/**
 * Where a page starts: `offset` rows into the list (page numbers), or right after / right before
 * the row with `key` (keyset cursors, whose cost does not depend on how deep the page is).
 */
export type ListPosition =
  | { kind: 'offset'; offset: number }
  | { kind: 'after'; key: ListKey }
  | { kind: 'before'; key: ListKey };

/** The position of page numbers: `offset` rows into the list. */
export function atOffset(offset: number): ListPosition {
  return { kind: 'offset', offset };
}

/** List-order keys of a page's first and last row. */
export interface PageBounds {
  first: ListKey;
  last: ListKey;
}

/**
 * Cursors are at most this long: `<micros>:<eventId>` is at most 18 + 1 + 64 bytes, 111 characters
 * of base64url. Longer values are refused before decoding.
 */
export const CURSOR_MAX_LENGTH = 128;

/**
 * Instants a cursor may name: those of the dates the API accepts (years 0001-9999, offsets up to
 * ±15:59), with a day of margin on each side. Beyond them a cursor cannot come from this service,
 * and the store's conversion back to a `timestamptz` would no longer be exact (event-store.ts).
 */
const DAY_MICROS = 86_400_000_000n;
// Date.parse, not Date.UTC, which reads years 0-99 as 1900-1999.
const MIN_AT_MICROS = BigInt(Date.parse('0000-01-01T00:00:00Z')) * 1000n - DAY_MICROS;
const MAX_AT_MICROS = BigInt(Date.parse('+010000-01-01T00:00:00Z')) * 1000n + DAY_MICROS;
const CURSOR_TEXT = /^[A-Za-z0-9_-]+$/;
const CURSOR_PAYLOAD = /^(-?(?:0|[1-9][0-9]{0,17})):(.+)$/;

/** An opaque, URL-safe cursor (base64url, no padding) naming `key`. */
export function encodeCursor(key: ListKey): string {
  return Buffer.from(`${key.atMicros}:${key.eventId}`, 'utf8').toString('base64url');
}

export type CursorDecoding = { ok: true; key: ListKey } | { ok: false; problem: string };

/**
 * The key a cursor names, or why it is not a cursor of this service: not base64url (or not in the
 * canonical form `encodeCursor` writes), not `<micros>:<eventId>`, or an instant out of range.
 */
export function decodeCursor(cursor: string): CursorDecoding {
  if (cursor.length === 0 || cursor.length > CURSOR_MAX_LENGTH || !CURSOR_TEXT.test(cursor)) {
    return { ok: false, problem: 'is not base64url text of at most 128 characters' };
  }
  const bytes = Buffer.from(cursor, 'base64url');
  // Node's decoder skips what it cannot use; only the canonical spelling of some bytes is accepted.
  if (bytes.toString('base64url') !== cursor) return { ok: false, problem: 'is not valid base64url' };
  const match = CURSOR_PAYLOAD.exec(bytes.toString('utf8'));
  if (match === null || match[1] === undefined || match[2] === undefined || !isValidEventId(match[2])) {
    return { ok: false, problem: 'does not name a position in the list' };
  }
  const atMicros = BigInt(match[1]);
  if (atMicros < MIN_AT_MICROS || atMicros > MAX_AT_MICROS) {
    return { ok: false, problem: 'names a date out of range' };
  }
  return { ok: true, key: { atMicros, eventId: match[2] } };
}

export function isCursor(value: string): boolean {
  return decodeCursor(value).ok;
}

/** What a list read found, as far as the links need it. */
export interface PageFound {
  total: number;
  /** Null when the page is empty. */
  bounds: PageBounds | null;
  /**
   * Cursor reads: whether rows lie beyond the page in the direction read (later rows for `after`,
   * earlier ones for `before`). Offset reads link by page numbers and the total instead.
   */
  more: boolean;
}

/**
 * `Link` header with `first`, `prev`, `next` and `last` relations; targets are relative references
 * (RFC 3986 section 4.2) to `path`, so they hold behind any host or proxy.
 *
 * `first` and `last` name pages only (the last page is read backwards from the end, so it is cheap).
 * `next` adds `after=<key of this page's last row>`, `prev` adds `before=<key of its first row>`, so
 * a client following them reads each page from its index position (cost independent of depth) and,
 * under concurrent writes, neither skips nor repeats a row that existed throughout. The page number
 * in those targets only numbers pages (for `X-Total-Count` and `last`); the cursor decides the rows.
 *
 * Which of `prev`/`next` exist: for page numbers, as without cursors (`page > 1`, `page < last`);
 * after a cursor, from the rows themselves (`more` in the direction read; the other direction is
 * where the client came from). An empty cursor page links back across its own cursor.
 */
export function linkHeader(
  path: string,
  request: PageRequest & { position: ListPosition },
  found: PageFound,
): string {
  const { page, limit, position } = request;
  const last = lastPage(found.total, limit);
  const target = (number: number, cursor?: { name: 'after' | 'before'; key: ListKey }): string =>
    `<${path}?page=${number}&limit=${limit}${cursor === undefined ? '' : `&${cursor.name}=${encodeCursor(cursor.key)}`}>`;
  const cursorKey = position.kind === 'offset' ? undefined : position.key;

  let hasPrev: boolean;
  let hasNext: boolean;
  switch (position.kind) {
    case 'offset':
      hasPrev = page > 1;
      hasNext = page < last;
      break;
    case 'after':
      hasPrev = true;
      hasNext = found.more;
      break;
    case 'before':
      hasPrev = found.more;
      hasNext = true;
      break;
  }
  // An empty page has no rows to take keys from: an empty cursor page reuses its own cursor
  // (the rows before `after=k` are `before=k`), an empty numbered page (past the end) links by number.
  const prevKey = found.bounds?.first ?? (position.kind === 'after' ? cursorKey : undefined);
  const nextKey = found.bounds?.last ?? (position.kind === 'before' ? cursorKey : undefined);

  const links = [`${target(1)}; rel="first"`];
  if (hasPrev) {
    const number = Math.max(1, Math.min(page - 1, last));
    links.push(`${target(number, prevKey && { name: 'before', key: prevKey })}; rel="prev"`);
  }
  if (hasNext) {
    const number = Math.min(page + 1, PAGE_DEFAULTS.maxPage);
    links.push(`${target(number, nextKey && { name: 'after', key: nextKey })}; rel="next"`);
  }
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
 * Cursor reads (`after`/`before`) need none of this: they start at their key in the index.
 */
export function indexWindow(total: number, offset: number, limit: number): IndexWindow | null {
  if (offset >= total) return null;
  const take = Math.min(limit, total - offset);
  const fromEnd = total - offset - take;
  return fromEnd < offset
    ? { direction: 'backward', skip: fromEnd, take }
    : { direction: 'forward', skip: offset, take };
}
