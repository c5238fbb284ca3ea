/** Unit tests of the pure rules: field formats, access decisions, preconditions, pagination. */
import { describe, expect, it } from 'vitest';
import {
  canRead,
  decideDelete,
  decidePut,
  notModified,
  parseEntityTags,
  type Viewer,
} from '../src/domain/access.js';
import {
  etagOf,
  isFullIsoDateTime,
  isHttpUrl,
  isValidEventId,
  type StoredEvent,
} from '../src/domain/event.js';
import {
  atOffset,
  CURSOR_MAX_LENGTH,
  decodeCursor,
  encodeCursor,
  indexWindow,
  type ListKey,
  linkHeader,
  offsetOf,
  type PageFound,
} from '../src/domain/pagination.js';

const event = (overrides: Partial<StoredEvent> = {}): StoredEvent => ({
  eventId: 'e1',
  name: 'n',
  body: 'b',
  cover: null,
  date: '2026-01-01T00:00:00Z',
  access: 'PUBLIC',
  createdBy: 'alice',
  createdAt: new Date(0),
  updatedAt: new Date(0),
  revision: '7',
  ...overrides,
});
const alice: Viewer = { userId: 'alice', member: false };
const bob: Viewer = { userId: 'bob', member: false };
const member: Viewer = { userId: 'carol', member: true };

describe('field formats', () => {
  it.each([
    ['2026-05-01T18:30:00Z', true],
    ['2026-05-01T18:30Z', true],
    ['2026-05-01T18:30:00.123456+02:00', true],
    ['2024-02-29T00:00:00-05:30', true],
    ['2026-05-01', false],
    ['2026-05-01T18:30:00', false],
    ['2026-05-01 18:30:00Z', false],
    ['2025-02-29T00:00:00Z', false],
    ['2026-13-01T00:00:00Z', false],
    ['2026-05-01T24:00:00Z', false],
    ['2026-05-01T18:30:00+2:00', false],
    ['1714588200', false],
    ['0001-01-01T00:00:00+15:59', true],
    ['9999-12-31T23:59:59-15:59', true],
    ['0000-01-01T00:00:00Z', false],
    ['2026-05-01T18:30:00+16:00', false],
    ['2026-05-01T18:30:00-23:59', false],
  ])('date-time %s -> %s', (value, valid) => {
    expect(isFullIsoDateTime(value)).toBe(valid);
  });

  it.each([
    ['https://example.com/a.png', true],
    ['http://example.com', true],
    ['HTTPS://EXAMPLE.COM/x', true],
    ['ftp://example.com/a.png', false],
    ['javascript:alert(1)', false],
    ['data:image/png;base64,AAAA', false],
    ['//example.com/a.png', false],
    ['https://', false],
    ['not a url', false],
  ])('cover %s -> %s', (value, valid) => {
    expect(isHttpUrl(value)).toBe(valid);
  });

  it.each([
    ['spring-meetup_2026.v1~x', true],
    ['a', true],
    ['x'.repeat(64), true],
    ['x'.repeat(65), false],
    ['', false],
    ['.', false],
    ['..', false],
    ['...', true],
    ['a b', false],
    ['a/b', false],
    ['é', false],
  ])('eventId %j -> %s', (value, valid) => {
    expect(isValidEventId(value)).toBe(valid);
  });
});

describe('visibility', () => {
  it('PRIVATE is readable by its creator and members only', () => {
    const secret = event({ access: 'PRIVATE' });
    expect(canRead(secret, null)).toBe(false);
    expect(canRead(secret, bob)).toBe(false);
    expect(canRead(secret, alice)).toBe(true);
    expect(canRead(secret, member)).toBe(true);
    expect(canRead(event(), null)).toBe(true);
  });
});

describe('preconditions', () => {
  it('parses *, lists and weak tags', () => {
    expect(parseEntityTags(undefined)).toBeUndefined();
    expect(parseEntityTags(' * ')).toBe('*');
    expect(parseEntityTags('"1", W/"2"')).toEqual(['"1"', 'W/"2"']);
    expect(parseEntityTags('garbage')).toEqual([]);
  });

  it('decidePut: create, replace, forbidden, and If-Match/If-None-Match', () => {
    expect(decidePut(undefined, alice, {}, etagOf)).toEqual({ ok: true, action: 'create' });
    expect(decidePut(undefined, alice, { ifMatch: '*' }, etagOf)).toEqual({
      ok: false,
      denial: 'PRECONDITION_FAILED',
    });
    expect(decidePut(event(), alice, {}, etagOf)).toEqual({ ok: true, action: 'replace', revision: '7' });
    expect(decidePut(event(), bob, {}, etagOf)).toEqual({ ok: false, denial: 'FORBIDDEN' });
    // A PRIVATE event the caller cannot read is 404, as on GET/DELETE; a member who can read it gets 403.
    expect(decidePut(event({ access: 'PRIVATE' }), bob, {}, etagOf)).toEqual({
      ok: false,
      denial: 'NOT_FOUND',
    });
    expect(decidePut(event({ access: 'PRIVATE' }), { userId: 'carol', member: true }, {}, etagOf)).toEqual({
      ok: false,
      denial: 'FORBIDDEN',
    });
    expect(decidePut(event(), alice, { ifMatch: ['"7"'] }, etagOf).ok).toBe(true);
    expect(decidePut(event(), alice, { ifMatch: ['W/"7"'] }, etagOf).ok).toBe(false);
    expect(decidePut(event(), alice, { ifMatch: ['"6"'] }, etagOf).ok).toBe(false);
    expect(decidePut(event(), alice, { ifNoneMatch: '*' }, etagOf).ok).toBe(false);
  });

  it('decideDelete: hidden is 404 before 403 before 412', () => {
    expect(decideDelete(undefined, alice, {}, etagOf)).toEqual({ ok: false, denial: 'NOT_FOUND' });
    expect(decideDelete(event({ access: 'PRIVATE' }), bob, { ifMatch: ['"1"'] }, etagOf)).toEqual({
      ok: false,
      denial: 'NOT_FOUND',
    });
    expect(decideDelete(event(), bob, { ifMatch: ['"1"'] }, etagOf)).toEqual({
      ok: false,
      denial: 'FORBIDDEN',
    });
    expect(decideDelete(event(), alice, { ifMatch: ['"1"'] }, etagOf)).toEqual({
      ok: false,
      denial: 'PRECONDITION_FAILED',
    });
    expect(decideDelete(event(), alice, { ifMatch: '*' }, etagOf)).toEqual({ ok: true, revision: '7' });
  });

  it('notModified uses weak comparison', () => {
    expect(notModified('W/"7"', '"7"')).toBe(true);
    expect(notModified('"8"', '"7"')).toBe(false);
    expect(notModified(undefined, '"7"')).toBe(false);
  });
});

describe('pagination', () => {
  /** What a numbered read found, without rows to take cursors from. */
  const counted = (total: number): PageFound => ({ total, bounds: null, more: false });

  it('offsets and links', () => {
    expect(offsetOf({ page: 3, limit: 10 })).toBe(20);
    expect(linkHeader('/events', { page: 1, limit: 10, position: atOffset(0) }, counted(0))).toBe(
      '</events?page=1&limit=10>; rel="first", </events?page=1&limit=10>; rel="last"',
    );
    expect(linkHeader('/events', { page: 2, limit: 10, position: atOffset(10) }, counted(25))).toBe(
      '</events?page=1&limit=10>; rel="first", </events?page=1&limit=10>; rel="prev", ' +
        '</events?page=3&limit=10>; rel="next", </events?page=3&limit=10>; rel="last"',
    );
    // Past the end, prev points at the last real page.
    expect(linkHeader('/events', { page: 9, limit: 10, position: atOffset(80) }, counted(25))).toContain(
      '</events?page=3&limit=10>; rel="prev"',
    );
  });
});

describe('cursors', () => {
  const k1: ListKey = { atMicros: 1_777_653_000_123_456n, eventId: 'spring-meetup' };
  const k2: ListKey = { atMicros: 1_777_660_000_000_000n, eventId: 'z.last~1' };
  const rows = (more: boolean): PageFound => ({ total: 25, bounds: { first: k1, last: k2 }, more });

  it('round-trip through an opaque URL-safe text, also at the ends of the date range', () => {
    const extremes: ListKey[] = [
      k1,
      { atMicros: 0n, eventId: 'a' },
      { atMicros: BigInt(Date.parse('1800-01-01T00:00:00Z')) * 1000n - 1n, eventId: 'old' },
      // The earliest and latest instants a date the API accepts can denote.
      { atMicros: BigInt(Date.parse('0000-01-01T00:00:00+23:59')) * 1000n, eventId: '-' },
      {
        atMicros: BigInt(Date.parse('9999-12-31T23:59:59.999-23:59')) * 1000n + 999n,
        eventId: 'x'.repeat(64),
      },
    ];
    for (const key of extremes) {
      const cursor = encodeCursor(key);
      expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
      expect(cursor.length).toBeLessThanOrEqual(CURSOR_MAX_LENGTH);
      expect(decodeCursor(cursor)).toEqual({ ok: true, key });
    }
  });

  const text = (payload: string) => Buffer.from(payload).toString('base64url');
  it.each([
    ['empty', '', 'is not base64url'],
    ['standard base64 characters', `${text('1:a')}+/`, 'is not base64url'],
    ['padding', `${text('1:ab')}=`, 'is not base64url'],
    ['over-long', 'A'.repeat(CURSOR_MAX_LENGTH + 4), 'is not base64url'],
    ['non-canonical base64url', `${text('1:ab').slice(0, -1)}x`, 'is not valid base64url'],
    ['impossible length', 'AAAAA', 'is not valid base64url'],
    ['no separator', text('1777653000'), 'does not name a position'],
    ['not a number', text('soon:a'), 'does not name a position'],
    ['leading zero', text('01:a'), 'does not name a position'],
    ['fraction', text('1.5:a'), 'does not name a position'],
    ['bad event id', text('1:a/b'), 'does not name a position'],
    ['dot-segment id', text('1:..'), 'does not name a position'],
    ['JSON', text('{"at":1,"id":"a"}'), 'does not name a position'],
    ['date too late', text('300000000000000000:a'), 'names a date out of range'],
    ['date too early', text('-70000000000000000:a'), 'names a date out of range'],
  ])('refuses a cursor: %s', (_name, cursor, problem) => {
    const decoded = decodeCursor(cursor);
    expect(decoded.ok).toBe(false);
    expect(decoded.ok ? '' : decoded.problem).toContain(problem);
  });

  it('next carries after=<last row>, prev before=<first row>; first and last stay numbered', () => {
    const link = linkHeader('/events', { page: 2, limit: 10, position: atOffset(10) }, rows(true));
    expect(link).toBe(
      '</events?page=1&limit=10>; rel="first", ' +
        `</events?page=1&limit=10&before=${encodeCursor(k1)}>; rel="prev", ` +
        `</events?page=3&limit=10&after=${encodeCursor(k2)}>; rel="next", ` +
        '</events?page=3&limit=10>; rel="last"',
    );
  });

  it('after a cursor, the rows decide next (after) or prev (before); page numbers only number', () => {
    // The numbered page 3 is the last of 25 rows, but rows written meanwhile follow: next is kept.
    const after = linkHeader(
      '/events',
      { page: 3, limit: 10, position: { kind: 'after', key: k1 } },
      rows(true),
    );
    expect(after).toContain(`</events?page=4&limit=10&after=${encodeCursor(k2)}>; rel="next"`);
    expect(after).toContain(`</events?page=2&limit=10&before=${encodeCursor(k1)}>; rel="prev"`);
    // ...and a page numbered 2 of 3 that has no rows after it has no next.
    const end = linkHeader(
      '/events',
      { page: 2, limit: 10, position: { kind: 'after', key: k1 } },
      rows(false),
    );
    expect(end).not.toContain('rel="next"');
    const before = linkHeader(
      '/events',
      { page: 2, limit: 10, position: { kind: 'before', key: k2 } },
      rows(false),
    );
    expect(before).not.toContain('rel="prev"');
    expect(before).toContain(`</events?page=3&limit=10&after=${encodeCursor(k2)}>; rel="next"`);
    // Page 1 reached backwards with rows still before it (inserted meanwhile): prev stays on page 1.
    const top = linkHeader(
      '/events',
      { page: 1, limit: 10, position: { kind: 'before', key: k2 } },
      rows(true),
    );
    expect(top).toContain(`</events?page=1&limit=10&before=${encodeCursor(k1)}>; rel="prev"`);
  });

  it('an empty cursor page links back across its own cursor', () => {
    const empty: PageFound = { total: 25, bounds: null, more: false };
    const after = linkHeader('/events', { page: 4, limit: 10, position: { kind: 'after', key: k2 } }, empty);
    expect(after).toContain(`</events?page=3&limit=10&before=${encodeCursor(k2)}>; rel="prev"`);
    expect(after).not.toContain('rel="next"');
    const before = linkHeader(
      '/events',
      { page: 1, limit: 10, position: { kind: 'before', key: k1 } },
      empty,
    );
    expect(before).toContain(`</events?page=2&limit=10&after=${encodeCursor(k1)}>; rel="next"`);
    expect(before).not.toContain('rel="prev"');
  });
});

describe('indexWindow', () => {
  it('reads the first half forwards and the second half backwards, so the deepest page skips nothing', () => {
    expect(indexWindow(1_000, 0, 100)).toEqual({ direction: 'forward', skip: 0, take: 100 });
    expect(indexWindow(1_000, 900, 100)).toEqual({ direction: 'backward', skip: 0, take: 100 });
    expect(indexWindow(1_000, 400, 100)).toEqual({ direction: 'forward', skip: 400, take: 100 });
    expect(indexWindow(1_000, 500, 100)).toEqual({ direction: 'backward', skip: 400, take: 100 });
    // A short last page, and pages past the end.
    expect(indexWindow(950, 900, 100)).toEqual({ direction: 'backward', skip: 0, take: 50 });
    expect(indexWindow(950, 950, 100)).toBeNull();
    expect(indexWindow(0, 0, 100)).toBeNull();
  });
});
