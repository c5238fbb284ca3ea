/**
 * Storage of events over any `SqlClient` (PostgreSQL or PGlite). Writes are compare-and-set on the
 * revision, so the route layer can read, decide (pure domain) and write without lost updates.
 */
import type { Viewer } from '../domain/access.js';
import type { Access, StoredEvent } from '../domain/event.js';
import {
  type IndexWindow,
  indexWindow,
  type ListKey,
  type ListPosition,
  type PageBounds,
} from '../domain/pagination.js';
import type { SqlClient } from './sql-client.js';

/** The fields a client controls, after defaults are applied. */
export interface EventFields {
  name: string;
  body: string;
  cover: string | null;
  date: string;
  access: Access;
}

/** Which events a listing may include. */
export type ListScope =
  | { kind: 'public' }
  /** PUBLIC ones plus those created by `userId`. */
  | { kind: 'creator'; userId: string }
  /** Every event (members). */
  | { kind: 'all' };

/** What a caller may list: anonymous the PUBLIC events, a user also its own, a member all. */
export function scopeOf(viewer: Viewer | null): ListScope {
  if (viewer === null) return { kind: 'public' };
  return viewer.member ? { kind: 'all' } : { kind: 'creator', userId: viewer.userId };
}

export interface EventPage {
  events: StoredEvent[];
  /** Rows the scope holds (from `event_counts`), whatever the position. */
  total: number;
  /** List-order keys of the first and last event (for the `Link` cursors); null when empty. */
  bounds: PageBounds | null;
  /**
   * Whether rows lie beyond the page in the direction it was read: later rows for `offset` and
   * `after`, earlier rows for `before`.
   */
  more: boolean;
}

export interface EventStore {
  get(eventId: string): Promise<StoredEvent | undefined>;
  /**
   * Up to `limit` events from `position`, ordered by `date` (as an instant), then `eventId`
   * (also for `before`, which reads backwards from its key).
   */
  list(scope: ListScope, position: ListPosition, limit: number): Promise<EventPage>;
  /** Creates the event; undefined when the id is already taken. */
  insert(
    eventId: string,
    fields: EventFields,
    createdBy: string,
    now: Date,
  ): Promise<StoredEvent | undefined>;
  /** Replaces the event if its revision is still `revision`; undefined otherwise. */
  replace(
    eventId: string,
    revision: string,
    fields: EventFields,
    now: Date,
  ): Promise<StoredEvent | undefined>;
  /** Deletes the event if its revision is still `revision`. */
  remove(eventId: string, revision: string): Promise<boolean>;
  ping(): Promise<void>;
  close(): Promise<void>;
}

export interface EventRow {
  event_id: string;
  name: string;
  body: string;
  cover: string | null;
  date: string;
  access: Access;
  created_by: string;
  created_at: Date | string;
  updated_at: Date | string;
  revision: string;
}

/** A page row: the event plus its list-order instant in microseconds (exact, as text). */
interface PageRow extends EventRow {
  at_micros: string;
}

export const COLUMNS =
  'event_id, name, body, cover, date, access, created_by, created_at, updated_at, revision';
const PAGE_COLUMNS = `${COLUMNS.split(', ')
  .map((column) => `e.${column}`)
  .join(', ')}, (extract(epoch FROM page.date_at) * 1000000)::bigint::text AS at_micros`;

/**
 * The cursor's instant as a `timestamptz`, from microseconds since the epoch (`$2`, text): whole
 * seconds plus the remainder, and free of the session time zone (no days or months added).
 * `interval * number` multiplies in float8, which is exact here because `decodeCursor` keeps the
 * instant within years 0000-9999 (|seconds| < 2^53 / 15,625); `to_timestamp` would round.
 */
const CURSOR_AT =
  "(timestamptz 'epoch' + ($2::bigint / 1000000) * interval '1 second' + ($2::bigint % 1000000) * interval '1 microsecond')";

function keyOf(row: PageRow): ListKey {
  return { atMicros: BigInt(row.at_micros), eventId: row.event_id };
}

function boundsOf(rows: readonly PageRow[]): PageBounds | null {
  const first = rows[0];
  const last = rows.at(-1);
  return first === undefined || last === undefined ? null : { first: keyOf(first), last: keyOf(last) };
}

export function fromRow(row: EventRow): StoredEvent {
  return {
    eventId: row.event_id,
    name: row.name,
    body: row.body,
    cover: row.cover,
    date: row.date,
    access: row.access,
    createdBy: row.created_by,
    createdAt: new Date(row.created_at),
    updatedAt: new Date(row.updated_at),
    revision: row.revision,
  };
}

/**
 * The page's keys, in list order, read from indexes only (migration 5): a deep page skips index
 * entries, never table rows, and the filter on `access`/`created_by` is the index's own predicate.
 * A creator's view merges two ordered index scans (PUBLIC; that creator's PRIVATE) with a
 * Merge Append, each bounded by offset + limit. `$1`/`$2` are limit/offset, `$3` the creator.
 */
function countKeysOf(scope: ListScope): string[] {
  switch (scope.kind) {
    case 'public':
      return ['public'];
    case 'creator':
      return ['public', `private:${scope.userId}`];
    case 'all':
      return ['public', 'private'];
  }
}

function pageKeys(scope: ListScope, direction: IndexWindow['direction']): { sql: string; params: unknown[] } {
  const order =
    direction === 'forward' ? 'ORDER BY date_at, event_id' : 'ORDER BY date_at DESC, event_id DESC';
  switch (scope.kind) {
    case 'public':
      return {
        sql: `SELECT event_id, date_at FROM events WHERE access = 'PUBLIC' ${order} LIMIT $1::int OFFSET $2::int`,
        params: [],
      };
    case 'creator':
      return {
        sql: `SELECT event_id, date_at FROM (
                (SELECT event_id, date_at FROM events WHERE access = 'PUBLIC' ${order} LIMIT $1::int + $2::int)
                UNION ALL
                (SELECT event_id, date_at FROM events WHERE access = 'PRIVATE' AND created_by = $3
                 ${order} LIMIT $1::int + $2::int)
              ) AS visible ${order} LIMIT $1::int OFFSET $2::int`,
        params: [scope.userId],
      };
    case 'all':
      return {
        sql: `SELECT event_id, date_at FROM events ${order} LIMIT $1::int OFFSET $2::int`,
        params: [],
      };
  }
}

/**
 * The keys after (`>`) or before (`<`) a cursor, nearest first, from the same indexes: the row
 * comparison `(date_at, event_id) > (k)` is an index condition, so the scan starts at the key and
 * reads `$1` entries whatever the depth. For a creator, each branch of the merge gets the condition
 * and its own limit. `$1` limit, `$2` the key's instant (microseconds), `$3` its event id, `$4` the creator.
 */
function cursorKeys(scope: ListScope, comparison: '>' | '<'): { sql: string; params: unknown[] } {
  const order = comparison === '>' ? 'ORDER BY date_at, event_id' : 'ORDER BY date_at DESC, event_id DESC';
  const from = `(date_at, event_id) ${comparison} (${CURSOR_AT}, $3::text)`;
  switch (scope.kind) {
    case 'public':
      return {
        sql: `SELECT event_id, date_at FROM events WHERE access = 'PUBLIC' AND ${from} ${order} LIMIT $1::int`,
        params: [],
      };
    case 'creator':
      return {
        sql: `SELECT event_id, date_at FROM (
                (SELECT event_id, date_at FROM events WHERE access = 'PUBLIC' AND ${from} ${order} LIMIT $1::int)
                UNION ALL
                (SELECT event_id, date_at FROM events WHERE access = 'PRIVATE' AND created_by = $4 AND ${from}
                 ${order} LIMIT $1::int)
              ) AS visible ${order} LIMIT $1::int`,
        params: [scope.userId],
      };
    case 'all':
      return {
        sql: `SELECT event_id, date_at FROM events WHERE ${from} ${order} LIMIT $1::int`,
        params: [],
      };
  }
}

/** Keys from the index, then the page's rows by primary key (a nested loop of one lookup per key). */
function pageQuery(keys: string): string {
  return `WITH page AS MATERIALIZED (${keys})
          SELECT ${PAGE_COLUMNS}
          FROM page JOIN events e ON e.event_id = page.event_id
          ORDER BY page.date_at, page.event_id`;
}

export function createEventStore(client: SqlClient): EventStore {
  return {
    async get(eventId) {
      const rows = await client.query<EventRow>(`SELECT ${COLUMNS} FROM events WHERE event_id = $1`, [
        eventId,
      ]);
      return rows[0] === undefined ? undefined : fromRow(rows[0]);
    },

    async list(scope, position, limit) {
      // Totals come from the trigger-maintained event_counts (migration 3), not count(*) over the
      // table; for page numbers the total also decides from which end the page is read (`indexWindow`).
      const counts = await client.query<{ total: string | number | null }>(
        'SELECT sum(n) AS total FROM event_counts WHERE scope_key = ANY($1::text[])',
        [countKeysOf(scope)],
      );
      const total = Number(counts[0]?.total ?? 0);
      if (position.kind === 'offset') {
        const window = indexWindow(total, position.offset, limit);
        if (window === null) return { events: [], total, bounds: null, more: false };
        const keys = pageKeys(scope, window.direction);
        const rows = await client.query<PageRow>(pageQuery(keys.sql), [
          window.take,
          window.skip,
          ...keys.params,
        ]);
        return {
          events: rows.map(fromRow),
          total,
          bounds: boundsOf(rows),
          more: position.offset + window.take < total,
        };
      }
      // One key more than the page, to know whether rows lie beyond it in the direction read.
      const keys = cursorKeys(scope, position.kind === 'after' ? '>' : '<');
      const found = await client.query<PageRow>(pageQuery(keys.sql), [
        limit + 1,
        position.key.atMicros.toString(),
        position.key.eventId,
        ...keys.params,
      ]);
      const more = found.length > limit;
      // In list order; the extra key is the farthest from the cursor: last after it, first before it.
      const rows = more ? (position.kind === 'after' ? found.slice(0, limit) : found.slice(1)) : found;
      return { events: rows.map(fromRow), total, bounds: boundsOf(rows), more };
    },

    async insert(eventId, fields, createdBy, now) {
      const rows = await client.query<EventRow>(
        `INSERT INTO events (event_id, name, body, cover, date, date_at, access, created_by, created_at, updated_at)
         VALUES ($1, $2, $3, $4, $5::text, $5::text::timestamptz, $6, $7, $8, $8)
         ON CONFLICT (event_id) DO NOTHING
         RETURNING ${COLUMNS}`,
        [eventId, fields.name, fields.body, fields.cover, fields.date, fields.access, createdBy, now],
      );
      return rows[0] === undefined ? undefined : fromRow(rows[0]);
    },

    async replace(eventId, revision, fields, now) {
      const rows = await client.query<EventRow>(
        `UPDATE events
         SET name = $3, body = $4, cover = $5, date = $6::text, date_at = $6::text::timestamptz, access = $7,
             updated_at = $8, revision = replace(gen_random_uuid()::text, '-', ''), sequence = sequence + 1
         WHERE event_id = $1 AND revision = $2
         RETURNING ${COLUMNS}`,
        [eventId, revision, fields.name, fields.body, fields.cover, fields.date, fields.access, now],
      );
      return rows[0] === undefined ? undefined : fromRow(rows[0]);
    },

    async remove(eventId, revision) {
      const rows = await client.query<{ event_id: string }>(
        'DELETE FROM events WHERE event_id = $1 AND revision = $2 RETURNING event_id',
        [eventId, revision],
      );
      return rows.length === 1;
    },

    ping: () => client.ping(),
    close: () => client.close(),
  };
}
