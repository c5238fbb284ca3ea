/**
 * Who may see and change an event, and what a write is allowed to do given the current row and the
 * request's preconditions. Pure: the caller reads the row, asks here, then writes with a
 * compare-and-set on the revision, so a concurrent change makes the write fail and be retried.
 */
import type { StoredEvent } from './event.js';

/** The authenticated caller, or null for an anonymous GET. */
export interface Viewer {
  userId: string;
  /** True when the token carries the membership claim: the caller may read PRIVATE events. */
  member: boolean;
}

/** Conditional request headers (RFC 9110 section 13.1). */
export interface Preconditions {
  /** `If-Match`: `*` or the entity tags listed; undefined when absent. */
  ifMatch?: '*' | readonly string[];
  /** `If-None-Match`: `*` or the entity tags listed; undefined when absent. */
  ifNoneMatch?: '*' | readonly string[];
}

export type Denial = 'NOT_FOUND' | 'FORBIDDEN' | 'PRECONDITION_FAILED';

export type PutDecision =
  | { ok: true; action: 'create' }
  | { ok: true; action: 'replace'; revision: string }
  | { ok: false; denial: Denial };

export type DeleteDecision = { ok: true; revision: string } | { ok: false; denial: Denial };

/** PRIVATE events exist only for their creator and for members; PUBLIC ones for everyone. */
export function canRead(event: Pick<StoredEvent, 'access' | 'createdBy'>, viewer: Viewer | null): boolean {
  if (event.access === 'PUBLIC') return true;
  if (viewer === null) return false;
  return viewer.member || viewer.userId === event.createdBy;
}

/** Parses an `If-Match` / `If-None-Match` value into `*` or its list of entity tags. */
export function parseEntityTags(header: string | undefined): '*' | string[] | undefined {
  if (header === undefined) return undefined;
  const trimmed = header.trim();
  if (trimmed === '*') return '*';
  const tags = trimmed.match(/(?:W\/)?"[^"]*"/g);
  return tags ?? [];
}

/** Strong comparison, as If-Match requires: weak tags never match. */
function strongMatch(tags: '*' | readonly string[], etag: string): boolean {
  if (tags === '*') return true;
  return tags.some((tag) => !tag.startsWith('W/') && tag === etag);
}

/** Weak comparison, as If-None-Match requires. */
function weakMatch(tags: '*' | readonly string[], etag: string): boolean {
  if (tags === '*') return true;
  const opaque = (tag: string): string => (tag.startsWith('W/') ? tag.slice(2) : tag);
  return tags.some((tag) => opaque(tag) === opaque(etag));
}

/**
 * PUT on `existing` (undefined when the id is free) by `viewer`.
 * An event the caller cannot read is 404, as on GET and DELETE, so a PRIVATE id's existence does not
 * leak; a PUBLIC event of another user is 403.
 */
export function decidePut(
  existing: StoredEvent | undefined,
  viewer: Viewer,
  preconditions: Preconditions,
  etag: (event: StoredEvent) => string,
): PutDecision {
  if (existing === undefined) {
    if (preconditions.ifMatch !== undefined) return { ok: false, denial: 'PRECONDITION_FAILED' };
    return { ok: true, action: 'create' };
  }
  if (!canRead(existing, viewer)) return { ok: false, denial: 'NOT_FOUND' };
  if (existing.createdBy !== viewer.userId) return { ok: false, denial: 'FORBIDDEN' };
  const current = etag(existing);
  if (preconditions.ifMatch !== undefined && !strongMatch(preconditions.ifMatch, current)) {
    return { ok: false, denial: 'PRECONDITION_FAILED' };
  }
  if (preconditions.ifNoneMatch !== undefined && weakMatch(preconditions.ifNoneMatch, current)) {
    return { ok: false, denial: 'PRECONDITION_FAILED' };
  }
  return { ok: true, action: 'replace', revision: existing.revision };
}

/** DELETE of `existing` by `viewer`: an event the caller cannot read is 404, not 403. */
export function decideDelete(
  existing: StoredEvent | undefined,
  viewer: Viewer,
  preconditions: Preconditions,
  etag: (event: StoredEvent) => string,
): DeleteDecision {
  if (existing === undefined || !canRead(existing, viewer)) return { ok: false, denial: 'NOT_FOUND' };
  if (existing.createdBy !== viewer.userId) return { ok: false, denial: 'FORBIDDEN' };
  if (preconditions.ifMatch !== undefined && !strongMatch(preconditions.ifMatch, etag(existing))) {
    return { ok: false, denial: 'PRECONDITION_FAILED' };
  }
  return { ok: true, revision: existing.revision };
}

/** True when a GET with this `If-None-Match` may answer 304 Not Modified. */
export function notModified(ifNoneMatch: string | undefined, etag: string): boolean {
  const tags = parseEntityTags(ifNoneMatch);
  return tags !== undefined && weakMatch(tags, etag);
}
