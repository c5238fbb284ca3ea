/**
 * The reads of `GET /events/sync` over the change log (migration 7). A full sync pages through the
 * events the caller may see by id; an incremental one walks the changes after its position in
 * log order and keeps, per event, only its last change up to the sync's end (`upto`), answered
 * with the event as it is now, or as a tombstone when the caller can no longer see it but could
 * at some point since the sync's start (so an event that was never visible leaves no trace).
 */
import type { StoredEvent } from '../domain/event.js';
import { COLUMNS, type EventRow, fromRow, type ListScope } from '../storage/event-store.js';
import type { SqlQueryable } from '../storage/sql-client.js';

export type SyncItem = { kind: 'event'; event: StoredEvent } | { kind: 'tombstone'; id: string };

export interface FullPage {
  events: StoredEvent[];
  /** More events lie after the page. */
  more: boolean;
}

export interface DeltaPage {
  items: SyncItem[];
  /** The change number of the page's last item (the next page starts after it). */
  last: bigint;
  more: boolean;
}

/** SQL of "the caller may see it" over columns `access`/`created_by` of `alias`; `$n` is the user. */
function visibleNow(scope: ListScope, alias: string, user: string): string {
  switch (scope.kind) {
    case 'public':
      return `coalesce(${alias}.access = 'PUBLIC', false)`;
    case 'creator':
      return `coalesce(${alias}.access = 'PUBLIC' OR ${alias}.created_by = ${user}, false)`;
    case 'all':
      return `(${alias}.event_id IS NOT NULL)`;
  }
}

/** The same over the before- and after-state of a logged change. */
function visibleInChange(scope: ListScope, alias: string, user: string): string {
  switch (scope.kind) {
    case 'public':
      return `coalesce(${alias}.before_access = 'PUBLIC' OR ${alias}.after_access = 'PUBLIC', false)`;
    case 'creator':
      return `coalesce(${alias}.before_access = 'PUBLIC' OR ${alias}.after_access = 'PUBLIC'
                OR ${alias}.before_by = ${user} OR ${alias}.after_by = ${user}, false)`;
    case 'all':
      return 'true';
  }
}

/** The user's id as the last parameter, only when the SQL names it (PostgreSQL refuses an untyped unused one). */
const userOf = (scope: ListScope): string[] => (scope.kind === 'creator' ? [scope.userId] : []);

interface DeltaRow extends Partial<EventRow> {
  seq: string;
  changed_id: string;
  visible: boolean;
}

export function createSyncStore(sql: SqlQueryable) {
  return {
    /** Up to `limit` events the scope may see with an id after `after`, in id order. */
    async fullPage(scope: ListScope, after: string, limit: number): Promise<FullPage> {
      const rows = await sql.query<EventRow>(
        `SELECT ${COLUMNS} FROM events e
         WHERE e.event_id > $1 AND ${visibleNow(scope, 'e', '$3')}
         ORDER BY e.event_id LIMIT $2`,
        [after, limit + 1, ...userOf(scope)],
      );
      const more = rows.length > limit;
      return { events: (more ? rows.slice(0, limit) : rows).map(fromRow), more };
    },

    /**
     * Up to `limit` items for the changes in (`after`, `upto`] of an incremental sync that started
     * at `from`: per event its last change in (`from`, `upto`] (so it comes once, in the order of
     * that change), as the event now when visible, else a tombstone when it was visible to the
     * scope at `from` or at some change since.
     */
    async deltaPage(
      scope: ListScope,
      range: { from: bigint; upto: bigint; after: bigint },
      limit: number,
    ): Promise<DeltaPage> {
      const rows = await sql.query<DeltaRow>(
        `SELECT c.seq::text AS seq, c.event_id AS changed_id, ${COLUMNS.split(', ')
          .map((column) => `e.${column}`)
          .join(', ')}, ${visibleNow(scope, 'e', '$5')} AS visible
         FROM event_changes c
         LEFT JOIN events e ON e.event_id = c.event_id
         WHERE c.kind = 'event' AND c.seq > $1 AND c.seq <= $2
           AND NOT EXISTS (
             SELECT 1 FROM event_changes l
             WHERE l.kind = 'event' AND l.event_id = c.event_id AND l.seq > c.seq AND l.seq <= $2)
           AND (${visibleNow(scope, 'e', '$5')} OR EXISTS (
             SELECT 1 FROM event_changes w
             WHERE w.kind = 'event' AND w.event_id = c.event_id AND w.seq > $3 AND w.seq <= $2
               AND ${visibleInChange(scope, 'w', '$5')}))
         ORDER BY c.seq LIMIT $4`,
        [range.after.toString(), range.upto.toString(), range.from.toString(), limit + 1, ...userOf(scope)],
      );
      const more = rows.length > limit;
      const page = more ? rows.slice(0, limit) : rows;
      const items = page.map(
        (row): SyncItem =>
          row.visible && row.event_id !== undefined && row.event_id !== null
            ? { kind: 'event', event: fromRow(row as EventRow) }
            : { kind: 'tombstone', id: row.changed_id },
      );
      const last = page.at(-1);
      return { items, last: last === undefined ? range.after : BigInt(last.seq), more };
    },
  };
}

export type SyncStore = ReturnType<typeof createSyncStore>;
