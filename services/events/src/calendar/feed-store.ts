/**
 * Storage of calendar feeds (migration 8) and the page reader of a feed's events. A feed's URL holds
 * a random secret; only its SHA-256 is stored, so the URL is shown once, at creation.
 */
import { createHash, randomBytes } from 'node:crypto';
import { ownerHasRoom } from '../storage/owner-bound.js';
import type { SqlClient } from '../storage/sql-client.js';
import type { CalendarRow } from './ics.js';

export interface CalendarFeed {
  id: string;
  owner: string;
  includePrivate: boolean;
  from: Date | null;
  to: Date | null;
  createdAt: Date;
}

export interface FeedWindow {
  includePrivate: boolean;
  from: Date | null;
  to: Date | null;
}

/** The events a feed shows: PUBLIC ones, plus `owner`'s PRIVATE ones when asked, in a window of `date`. */
export interface FeedScope extends FeedWindow {
  owner: string | null;
}

interface FeedRow {
  id: string;
  owner: string;
  include_private: boolean;
  from_at: Date | string | null;
  to_at: Date | string | null;
  created_at: Date | string;
}

const FEED_COLUMNS = 'id, owner, include_private, from_at, to_at, created_at';

function fromRow(row: FeedRow): CalendarFeed {
  return {
    id: row.id,
    owner: row.owner,
    includePrivate: row.include_private,
    from: row.from_at === null ? null : new Date(row.from_at),
    to: row.to_at === null ? null : new Date(row.to_at),
    createdAt: new Date(row.created_at),
  };
}

/** The secret's digest as stored. */
export function tokenHash(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/** A feed secret: 256 random bits, 43 base64url characters. */
export const FEED_TOKEN_PATTERN = /^[A-Za-z0-9_-]{43}$/;

export type CreateFeedResult = { ok: true; feed: CalendarFeed; token: string } | { ok: false; limit: number };

interface EventPageRow {
  event_id: string;
  name: string;
  body: string;
  date_at: Date | string;
  date_at_text: string;
  access: 'PUBLIC' | 'PRIVATE';
  created_at: Date | string;
  updated_at: Date | string;
  sequence: number;
}

/** The position after the last row of a page: its instant (as PostgreSQL wrote it, exact) and id. */
export interface RowKey {
  at: string;
  eventId: string;
}

export function createFeedStore(sql: SqlClient) {
  return {
    /** Creates a feed unless `owner` has `maxPerOwner` already (checked under a lock per owner). */
    async create(
      owner: string,
      window: FeedWindow,
      now: Date,
      maxPerOwner: number,
    ): Promise<CreateFeedResult> {
      const token = randomBytes(32).toString('base64url');
      const id = `cf_${randomBytes(16).toString('base64url')}`;
      return sql.transaction(async (tx) => {
        if (!(await ownerHasRoom(tx, 'calendar_feeds', owner, maxPerOwner)))
          return { ok: false, limit: maxPerOwner };
        const rows = await tx.query<FeedRow>(
          `INSERT INTO calendar_feeds (id, owner, token_hash, include_private, from_at, to_at, created_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING ${FEED_COLUMNS}`,
          [
            id,
            owner,
            tokenHash(token),
            window.includePrivate,
            window.from?.toISOString() ?? null,
            window.to?.toISOString() ?? null,
            now.toISOString(),
          ],
        );
        const row = rows[0];
        if (row === undefined) throw new Error('calendar feed insert returned nothing');
        return { ok: true, feed: fromRow(row), token };
      });
    },

    async list(owner: string): Promise<CalendarFeed[]> {
      const rows = await sql.query<FeedRow>(
        `SELECT ${FEED_COLUMNS} FROM calendar_feeds WHERE owner = $1 ORDER BY created_at, id`,
        [owner],
      );
      return rows.map(fromRow);
    },

    /** Revokes `owner`'s feed `id`; false when there is none (or it is someone else's). */
    async remove(owner: string, id: string): Promise<boolean> {
      const rows = await sql.query<{ id: string }>(
        'DELETE FROM calendar_feeds WHERE id = $1 AND owner = $2 RETURNING id',
        [id, owner],
      );
      return rows.length === 1;
    },

    async byToken(token: string): Promise<CalendarFeed | undefined> {
      if (!FEED_TOKEN_PATTERN.test(token)) return undefined;
      const rows = await sql.query<FeedRow>(
        `SELECT ${FEED_COLUMNS} FROM calendar_feeds WHERE token_hash = $1`,
        [tokenHash(token)],
      );
      return rows[0] === undefined ? undefined : fromRow(rows[0]);
    },

    /** Up to `limit` events of the scope after `after`, in list order (`date` instant, then id). */
    async eventPage(
      scope: FeedScope,
      after: RowKey | null,
      limit: number,
    ): Promise<{ rows: CalendarRow[]; last: RowKey | null }> {
      const params: unknown[] = [limit];
      const where: string[] = [];
      if (scope.includePrivate && scope.owner !== null) {
        params.push(scope.owner);
        where.push(`(access = 'PUBLIC' OR created_by = $${params.length})`);
      } else {
        where.push(`access = 'PUBLIC'`);
      }
      if (after !== null) {
        params.push(after.at, after.eventId);
        where.push(`(date_at, event_id) > ($${params.length - 1}::timestamptz, $${params.length}::text)`);
      }
      if (scope.from !== null) {
        params.push(scope.from.toISOString());
        where.push(`date_at >= $${params.length}::timestamptz`);
      }
      if (scope.to !== null) {
        params.push(scope.to.toISOString());
        where.push(`date_at < $${params.length}::timestamptz`);
      }
      const rows = await sql.query<EventPageRow>(
        `SELECT event_id, name, body, date_at, date_at::text AS date_at_text, access, created_at, updated_at, sequence
         FROM events WHERE ${where.join(' AND ')}
         ORDER BY date_at, event_id LIMIT $1`,
        params,
      );
      const last = rows.at(-1);
      return {
        rows: rows.map((row) => ({
          eventId: row.event_id,
          name: row.name,
          body: row.body,
          dateAt: new Date(row.date_at),
          access: row.access,
          createdAt: new Date(row.created_at),
          updatedAt: new Date(row.updated_at),
          sequence: Number(row.sequence),
        })),
        last: last === undefined ? null : { at: last.date_at_text, eventId: last.event_id },
      };
    },
  };
}

export type FeedStore = ReturnType<typeof createFeedStore>;
