/**
 * The event resource and the rules on its fields. Pure: no I/O, no clock.
 * Spec: `shared/spec/events-and-graphql-proxy.md`, part A, "Resources and their fields".
 */

export const ACCESS_LEVELS = ['PUBLIC', 'PRIVATE'] as const;
export type Access = (typeof ACCESS_LEVELS)[number];

/** Documented limits of the create/replace body (also enforced by the route schema). */
export const LIMITS = {
  /** `eventId`: 1-64 characters. */
  eventIdMaxLength: 64,
  /** `name`: 1-200 characters. */
  nameMaxLength: 200,
  /** `body`: 1-100,000 characters of Markdown. */
  bodyMaxLength: 100_000,
  /** `cover`: an http(s) URL of at most 2,048 characters. */
  coverMaxLength: 2_048,
  /** `createdBy` comes from the token's `sub`; longer subjects are refused. */
  userIdMaxLength: 255,
} as const;

/**
 * `eventId` is one path segment made of RFC 3986 "unreserved" characters (letters, digits, `-`, `.`,
 * `_`, `~`), so it never needs percent-encoding; `.` and `..` are refused because they are
 * dot-segments that clients and proxies normalise away.
 */
export const EVENT_ID_PATTERN = '^(?!\\.{1,2}$)[A-Za-z0-9._~-]{1,64}$';
const EVENT_ID_REGEX = new RegExp(EVENT_ID_PATTERN);

/** Ids whose `GET /events/{id}` is another route (`GET /events/sync`): refused on PUT. */
export const RESERVED_EVENT_IDS: readonly string[] = ['sync'];

export function isValidEventId(value: string): boolean {
  return EVENT_ID_REGEX.test(value);
}

/**
 * A full ISO 8601 / RFC 3339 date-time: date, `T`, time with at least minutes, and a zone (`Z` or
 * `+hh:mm`). Calendar dates that do not exist (2026-02-30) and out-of-range times are refused, and
 * so is what PostgreSQL's `timestamptz` cannot hold (the stored `date_at`): year 0000 and zone
 * offsets beyond ±15:59 (both answered 500 before, as the database refused them).
 */
const DATE_TIME_REGEX =
  /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(Z|[+-](\d{2}):(\d{2}))$/;

export function isFullIsoDateTime(value: string): boolean {
  const match = DATE_TIME_REGEX.exec(value);
  if (match === null) return false;
  const [, y, mo, d, h, mi, s, , zh, zm] = match;
  const year = Number(y);
  const month = Number(mo);
  const day = Number(d);
  if (year < 1 || month < 1 || month > 12 || day < 1) return false;
  const daysInMonth = new Date(Date.UTC(year, month, 0)).getUTCDate();
  if (day > daysInMonth) return false;
  if (Number(h) > 23 || Number(mi) > 59 || Number(s ?? 0) > 59) return false;
  if (zh !== undefined && (Number(zh) > 15 || Number(zm) > 59)) return false;
  return true;
}

/**
 * `cover`: an absolute `http:`/`https:` URL with a host, checked on the text as sent, because the
 * WHATWG parser repairs what it is given (`http:///a` becomes host `a`, spaces become `%20`):
 * no whitespace or control characters, an authority right after `//`, no user name or password
 * (RFC 9110 section 4.2.4 forbids userinfo in http(s) URIs).
 */
const HTTP_URL_REGEX = /^https?:\/\/[^/?#@\\]+(?:[/?#][^\s\\]*)?$/i;

export function isHttpUrl(value: string): boolean {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it refuses
  if (/[\s\x00-\x1f\x7f]/.test(value) || !HTTP_URL_REGEX.test(value)) return false;
  try {
    const url = new URL(value);
    return (
      (url.protocol === 'http:' || url.protocol === 'https:') &&
      url.hostname.length > 0 &&
      url.username === '' &&
      url.password === ''
    );
  } catch {
    return false;
  }
}

/** What a client may send on PUT. */
export interface EventInput {
  name: string;
  body: string;
  cover?: string;
  date: string;
  access?: Access;
}

/** An event as stored, with the server-owned fields. */
export interface StoredEvent {
  eventId: string;
  name: string;
  body: string;
  cover: string | null;
  /** The date-time exactly as the client sent it (its offset is kept). */
  date: string;
  access: Access;
  createdBy: string;
  createdAt: Date;
  updatedAt: Date;
  /** 128 random bits drawn on every write (never reused in practice): the opaque ETag. */
  revision: string;
}

/** The JSON representation returned by the API. */
export interface EventView {
  eventId: string;
  name: string;
  body: string;
  cover?: string;
  date: string;
  access: Access;
  createdAt: string;
  createdBy: string;
  updatedAt: string;
}

export function toView(event: StoredEvent): EventView {
  const view: EventView = {
    eventId: event.eventId,
    name: event.name,
    body: event.body,
    date: event.date,
    access: event.access,
    createdAt: event.createdAt.toISOString(),
    createdBy: event.createdBy,
    updatedAt: event.updatedAt.toISOString(),
  };
  if (event.cover !== null) view.cover = event.cover;
  return view;
}

/** Strong entity tag of one stored revision (RFC 9110 section 8.8.3). */
export function etagOf(event: Pick<StoredEvent, 'revision'>): string {
  return `"${event.revision}"`;
}
