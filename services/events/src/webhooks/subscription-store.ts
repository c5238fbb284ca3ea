/**
 * Storage of webhook subscriptions and their deliveries (migration 7). A subscription is a cursor
 * into the change log: the messages it has to send are the changes after `cursor_seq` it may see
 * (`messages.ts`), sent in log order, the first one (`attempts`, `next_attempt_at`) holding the
 * others back until it is delivered or given up. The outbox is therefore the change log itself,
 * written by the trigger in the same transaction as the event; a subscription costs a write nothing.
 */
import { randomBytes } from 'node:crypto';
import { nextChangeNumber } from '../changes/change-log.js';
import type { Access } from '../domain/event.js';
import { ownerHasRoom } from '../storage/owner-bound.js';
import type { SqlClient, SqlQueryable } from '../storage/sql-client.js';
import { EVENT_TYPES, type EventType, type LoggedChange, type MessageType, secretFrom } from './messages.js';

export interface Subscription {
  id: string;
  owner: string;
  member: boolean;
  url: string;
  types: EventType[];
  status: 'active' | 'disabled';
  disabledReason: string | null;
  createdAt: Date;
  cursor: bigint;
  attempts: number;
  nextAttemptAt: Date;
  lastResponseStatus: number | null;
  lastError: string | null;
  /** Whether a previous secret still signs (a rotation's grace), until when. */
  previousSecretUntil: Date | null;
}

/** What only the sender reads: the secrets. */
export interface SendingSubscription extends Subscription {
  secret: string;
  previousSecret: string | null;
}

interface SubscriptionRow {
  id: string;
  owner: string;
  member: boolean;
  url: string;
  types: string[] | string;
  status: 'active' | 'disabled';
  disabled_reason: string | null;
  created_at: Date | string;
  cursor_seq: string;
  attempts: number;
  next_attempt_at: Date | string;
  last_response_status: number | null;
  last_error: string | null;
  secret: string;
  previous_secret: string | null;
  previous_secret_until: Date | string | null;
}

// Numbers leave as text (bigint beyond 2^53); a query sorts by the table's column, never by that
// text alias (ORDER BY seq would sort '10' before '9').
const COLUMNS = `id, owner, member, url, types, status, disabled_reason, created_at, cursor_seq::text AS cursor_seq,
  attempts, next_attempt_at, last_response_status, last_error, secret, previous_secret, previous_secret_until`;

/** `text[]` comes back as an array from pg and PGlite alike; parsed by hand should a driver give the literal. */
function typesOf(value: string[] | string): EventType[] {
  const list = Array.isArray(value)
    ? value
    : value
        .replace(/^\{|\}$/g, '')
        .split(',')
        .filter(Boolean);
  return list.filter((type): type is EventType => (EVENT_TYPES as readonly string[]).includes(type));
}

function fromRow(row: SubscriptionRow): SendingSubscription {
  return {
    id: row.id,
    owner: row.owner,
    member: row.member,
    url: row.url,
    types: typesOf(row.types),
    status: row.status,
    disabledReason: row.disabled_reason,
    createdAt: new Date(row.created_at),
    cursor: BigInt(row.cursor_seq),
    attempts: Number(row.attempts),
    nextAttemptAt: new Date(row.next_attempt_at),
    lastResponseStatus: row.last_response_status === null ? null : Number(row.last_response_status),
    lastError: row.last_error,
    secret: row.secret,
    previousSecret: row.previous_secret,
    previousSecretUntil: row.previous_secret_until === null ? null : new Date(row.previous_secret_until),
  };
}

interface ChangeRow {
  seq: string;
  kind: 'event' | 'test';
  event_id: string | null;
  target_subscription: string | null;
  message_id: string;
  changed_at: Date | string;
  before_access: Access | null;
  before_by: string | null;
  after_access: Access | null;
  after_by: string | null;
  name: string | null;
  body: string | null;
  cover: string | null;
  date: string | null;
  created_at: Date | string | null;
  updated_at: Date | string | null;
}

function changeOf(row: ChangeRow, withSnapshot: boolean): LoggedChange {
  return {
    seq: BigInt(row.seq),
    kind: row.kind,
    eventId: row.event_id,
    target: row.target_subscription,
    messageId: row.message_id,
    changedAt: new Date(row.changed_at),
    before: row.before_access === null ? null : { access: row.before_access, createdBy: row.before_by ?? '' },
    after: row.after_access === null ? null : { access: row.after_access, createdBy: row.after_by ?? '' },
    snapshot:
      withSnapshot &&
      row.name !== null &&
      row.body !== null &&
      row.date !== null &&
      row.created_at !== null &&
      row.updated_at !== null
        ? {
            name: row.name,
            body: row.body,
            cover: row.cover,
            date: row.date,
            createdAt: new Date(row.created_at),
            updatedAt: new Date(row.updated_at),
          }
        : null,
  };
}

/** A message a subscription is done with, as kept in `webhook_deliveries`. */
export interface FinishedMessage {
  seq: bigint;
  messageId: string;
  type: MessageType;
  status: 'delivered' | 'failed';
  attempts: number;
  lastResponseStatus: number | null;
  finishedAt: Date;
}

export type CreateResult =
  | { ok: true; subscription: Subscription; secret: string }
  | { ok: false; limit: number };

/** Inserts the finished messages given as the 7 array parameters from `$first` on, for each row of `alias`. */
function insertFinished(alias: string, first: number): string {
  const p = (offset: number): string => `$${first + offset}`;
  return `INSERT INTO webhook_deliveries
      (subscription_id, seq, message_id, type, status, attempts, last_response_status, finished_at)
    SELECT ${alias}.id, f.seq, f.message_id, f.type, f.status, f.attempts, f.last_status, f.finished_at
    FROM ${alias}, unnest(${p(0)}::bigint[], ${p(1)}::text[], ${p(2)}::text[], ${p(3)}::text[], ${p(4)}::int[],
      ${p(5)}::int[], ${p(6)}::timestamptz[]) AS f(seq, message_id, type, status, attempts, last_status, finished_at)
    ON CONFLICT (subscription_id, seq) DO NOTHING`;
}

/** The 7 array parameters of `insertFinished`. */
function finishedParams(finished: readonly FinishedMessage[]): unknown[] {
  return [
    finished.map((m) => m.seq.toString()),
    finished.map((m) => m.messageId),
    finished.map((m) => m.type),
    finished.map((m) => m.status),
    finished.map((m) => m.attempts),
    finished.map((m) => m.lastResponseStatus),
    finished.map((m) => m.finishedAt.toISOString()),
  ];
}

export function createSubscriptionStore(sql: SqlClient) {
  const one = async (
    query: SqlQueryable,
    text: string,
    params: unknown[],
  ): Promise<SendingSubscription | undefined> => {
    const rows = await query.query<SubscriptionRow>(text, params);
    return rows[0] === undefined ? undefined : fromRow(rows[0]);
  };

  return {
    /**
     * Creates a subscription starting at the log's head: it receives the changes after it. The head
     * row is locked meanwhile, so no change is numbered after this cursor yet written before the
     * subscription was visible to the trigger (which then keeps the event's fields for payloads).
     */
    async create(
      owner: string,
      member: boolean,
      url: string,
      types: readonly EventType[],
      now: Date,
      maxPerOwner: number,
    ): Promise<CreateResult> {
      const id = `wh_${randomBytes(16).toString('base64url')}`;
      const secret = secretFrom(randomBytes(32));
      return sql.transaction(async (tx) => {
        if (!(await ownerHasRoom(tx, 'webhook_subscriptions', owner, maxPerOwner))) {
          return { ok: false, limit: maxPerOwner };
        }
        const head = await tx.query<{ seq: string }>(
          "SELECT seq::text AS seq FROM event_log_marks WHERE name = 'head' FOR UPDATE",
        );
        const created = await one(
          tx,
          `INSERT INTO webhook_subscriptions (id, owner, member, url, types, status, secret, created_at, cursor_seq, next_attempt_at)
           VALUES ($1, $2, $3, $4, $5::text[], 'active', $6, $7, $8::bigint, $7) RETURNING ${COLUMNS}`,
          [id, owner, member, url, [...types], secret, now.toISOString(), head[0]?.seq ?? '0'],
        );
        if (created === undefined) throw new Error('webhook subscription insert returned nothing');
        return { ok: true, subscription: created, secret };
      });
    },

    async list(owner: string): Promise<SendingSubscription[]> {
      const rows = await sql.query<SubscriptionRow>(
        `SELECT ${COLUMNS} FROM webhook_subscriptions WHERE owner = $1 ORDER BY created_at, id`,
        [owner],
      );
      return rows.map(fromRow);
    },

    /** `owner`'s subscription `id` (another owner's is undefined, as a missing one). */
    get: (owner: string, id: string) =>
      one(sql, `SELECT ${COLUMNS} FROM webhook_subscriptions WHERE id = $1 AND owner = $2`, [id, owner]),

    async remove(owner: string, id: string): Promise<boolean> {
      const rows = await sql.query<{ id: string }>(
        'DELETE FROM webhook_subscriptions WHERE id = $1 AND owner = $2 RETURNING id',
        [id, owner],
      );
      return rows.length === 1;
    },

    /** A new secret; the current one keeps signing until `graceUntil` (the one before it stops now). */
    async rotate(
      owner: string,
      id: string,
      graceUntil: Date,
    ): Promise<{ secret: string; subscription: Subscription } | undefined> {
      const secret = secretFrom(randomBytes(32));
      const updated = await one(
        sql,
        `UPDATE webhook_subscriptions SET previous_secret = secret, previous_secret_until = $3, secret = $4
         WHERE id = $1 AND owner = $2 RETURNING ${COLUMNS}`,
        [id, owner, graceUntil.toISOString(), secret],
      );
      return updated === undefined ? undefined : { secret, subscription: updated };
    },

    /**
     * Queues a `webhook.test` message for the subscription, in order with its other messages (a
     * change of kind `test` in the log). Refused past `maxWaiting` test messages not sent yet.
     */
    async enqueueTest(
      owner: string,
      id: string,
      now: Date,
      maxWaiting: number,
    ): Promise<{ ok: true; messageId: string } | { ok: false; reason: 'missing' | 'limit' | 'disabled' }> {
      return sql.transaction(async (tx) => {
        const found = await one(
          tx,
          `SELECT ${COLUMNS} FROM webhook_subscriptions WHERE id = $1 AND owner = $2 FOR UPDATE`,
          [id, owner],
        );
        if (found === undefined) return { ok: false, reason: 'missing' };
        if (found.status !== 'active') return { ok: false, reason: 'disabled' };
        const waiting = await tx.query<{ n: number }>(
          "SELECT count(*)::int AS n FROM event_changes WHERE seq > $1::bigint AND kind = 'test' AND target_subscription = $2",
          [found.cursor.toString(), id],
        );
        if (Number(waiting[0]?.n ?? 0) >= maxWaiting) return { ok: false, reason: 'limit' };
        const messageId = `msg_${randomBytes(16).toString('hex')}`;
        const seq = await nextChangeNumber(tx);
        await tx.query(
          `INSERT INTO event_changes (seq, kind, target_subscription, message_id, changed_at)
           VALUES ($1::bigint, 'test', $2, $3, $4)`,
          [seq.toString(), id, messageId, now.toISOString()],
        );
        return { ok: true, messageId };
      });
    },

    /** Finished messages of a subscription, newest first. */
    async finished(id: string, limit: number): Promise<FinishedMessage[]> {
      const rows = await sql.query<{
        seq: string;
        message_id: string;
        type: MessageType;
        status: 'delivered' | 'failed';
        attempts: number;
        last_response_status: number | null;
        finished_at: Date | string;
      }>(
        `SELECT seq::text AS seq, message_id, type, status, attempts, last_response_status, finished_at
         FROM webhook_deliveries WHERE subscription_id = $1 ORDER BY webhook_deliveries.seq DESC LIMIT $2`,
        [id, limit],
      );
      return rows.map((row) => ({
        seq: BigInt(row.seq),
        messageId: row.message_id,
        type: row.type,
        status: row.status,
        attempts: Number(row.attempts),
        lastResponseStatus: row.last_response_status === null ? null : Number(row.last_response_status),
        finishedAt: new Date(row.finished_at),
      }));
    },

    /** Changes after `after` (newest first when `newestFirst`), at most `limit`, without the event fields. */
    async recentChanges(after: bigint, limit: number): Promise<LoggedChange[]> {
      const rows = await sql.query<ChangeRow>(
        `SELECT seq::text AS seq, kind, event_id, target_subscription, message_id, changed_at,
                before_access, before_by, after_access, after_by,
                NULL AS name, NULL AS body, NULL AS cover, NULL AS date, NULL AS created_at, NULL AS updated_at
         FROM event_changes WHERE seq > $1::bigint ORDER BY event_changes.seq DESC LIMIT $2`,
        [after.toString(), limit],
      );
      return rows.map((row) => changeOf(row, false));
    },

    // ---- the sender's side ----

    /** Active subscriptions due now with changes after their cursor, oldest due first. */
    async due(now: Date, limit: number): Promise<string[]> {
      const rows = await sql.query<{ id: string }>(
        `SELECT id FROM webhook_subscriptions
         WHERE status = 'active' AND next_attempt_at <= $1
           AND cursor_seq < (SELECT seq FROM event_log_marks WHERE name = 'head')
         ORDER BY next_attempt_at LIMIT $2`,
        [now.toISOString(), limit],
      );
      return rows.map((row) => row.id);
    },

    byId: (id: string) => one(sql, `SELECT ${COLUMNS} FROM webhook_subscriptions WHERE id = $1`, [id]),

    /**
     * The subscription and up to `limit` changes after its cursor (oldest first, with the event
     * fields), in one statement: what a sender reads before each batch.
     */
    async pendingBatch(
      id: string,
      limit: number,
    ): Promise<{ sub: SendingSubscription | undefined; changes: LoggedChange[] }> {
      const rows = await sql.query<
        SubscriptionRow & { [K in keyof ChangeRow as `c_${K}`]: ChangeRow[K] | null }
      >(
        `SELECT ${COLUMNS.split(',')
          .map((column) => `s.${column.trim()}`)
          .join(', ')},
                c.seq::text AS c_seq, c.kind AS c_kind, c.event_id AS c_event_id,
                c.target_subscription AS c_target_subscription, c.message_id AS c_message_id,
                c.changed_at AS c_changed_at, c.before_access AS c_before_access, c.before_by AS c_before_by,
                c.after_access AS c_after_access, c.after_by AS c_after_by, c.name AS c_name, c.body AS c_body,
                c.cover AS c_cover, c.date AS c_date, c.created_at AS c_created_at, c.updated_at AS c_updated_at
         FROM webhook_subscriptions s
         LEFT JOIN LATERAL (
           SELECT * FROM event_changes e WHERE e.seq > s.cursor_seq ORDER BY e.seq LIMIT $2
         ) c ON true
         WHERE s.id = $1
         ORDER BY c.seq`,
        [id, limit],
      );
      const first = rows[0];
      if (first === undefined) return { sub: undefined, changes: [] };
      const changes: LoggedChange[] = [];
      for (const row of rows) {
        if (
          row.c_seq === null ||
          row.c_kind === null ||
          row.c_message_id === null ||
          row.c_changed_at === null
        )
          continue;
        changes.push(
          changeOf(
            {
              seq: row.c_seq,
              kind: row.c_kind,
              event_id: row.c_event_id,
              target_subscription: row.c_target_subscription,
              message_id: row.c_message_id,
              changed_at: row.c_changed_at,
              before_access: row.c_before_access,
              before_by: row.c_before_by,
              after_access: row.c_after_access,
              after_by: row.c_after_by,
              name: row.c_name,
              body: row.c_body,
              cover: row.c_cover,
              date: row.c_date,
              created_at: row.c_created_at,
              updated_at: row.c_updated_at,
            },
            true,
          ),
        );
      }
      return { sub: fromRow(first), changes };
    },

    /** The log's changes after `after`, oldest first, with the event fields for payloads. */
    async changesAfter(after: bigint, limit: number): Promise<LoggedChange[]> {
      const rows = await sql.query<ChangeRow>(
        `SELECT seq::text AS seq, kind, event_id, target_subscription, message_id, changed_at,
                before_access, before_by, after_access, after_by, name, body, cover, date, created_at, updated_at
         FROM event_changes WHERE seq > $1::bigint ORDER BY event_changes.seq LIMIT $2`,
        [after.toString(), limit],
      );
      return rows.map((row) => changeOf(row, true));
    },

    /**
     * Moves the cursor from `expected` to `to` (compare-and-set: false when another sender moved it
     * or the subscription is gone or disabled) and records the delivered messages, in one statement.
     */
    async advance(
      id: string,
      expected: bigint,
      to: bigint,
      now: Date,
      finished: readonly FinishedMessage[],
      lastStatus: number | null,
    ): Promise<boolean> {
      const rows = await sql.query<{ moved: number }>(
        `WITH moved AS (
           UPDATE webhook_subscriptions
           SET cursor_seq = $3::bigint, attempts = 0, next_attempt_at = $4::timestamptz,
               last_response_status = coalesce($5::int, last_response_status), last_error = NULL
           WHERE id = $1 AND cursor_seq = $2::bigint AND status = 'active'
           RETURNING id
         ), kept AS (${insertFinished('moved', 6)} RETURNING 1)
         SELECT (SELECT count(*) FROM moved)::int AS moved`,
        [id, expected.toString(), to.toString(), now.toISOString(), lastStatus, ...finishedParams(finished)],
      );
      return Number(rows[0]?.moved ?? 0) === 1;
    },

    /** Records a failed attempt of the first waiting message; it comes again at `nextAttemptAt`. */
    async retryLater(
      id: string,
      expected: bigint,
      attempts: number,
      nextAttemptAt: Date,
      lastStatus: number | null,
      error: string,
    ): Promise<boolean> {
      const rows = await sql.query<{ id: string }>(
        `UPDATE webhook_subscriptions
         SET attempts = $3, next_attempt_at = $4, last_response_status = $5::int, last_error = $6
         WHERE id = $1 AND cursor_seq = $2::bigint AND status = 'active' RETURNING id`,
        [id, expected.toString(), attempts, nextAttemptAt.toISOString(), lastStatus, error.slice(0, 500)],
      );
      return rows.length === 1;
    },

    /**
     * Disables the subscription (410, retries used up, or fallen behind the log's retention),
     * recording `failed` (the message given up, if any) and moving the cursor past it.
     */
    async disable(
      id: string,
      expected: bigint,
      to: bigint,
      reason: string,
      failed: readonly FinishedMessage[],
      lastStatus: number | null,
      error: string | null,
    ): Promise<boolean> {
      const rows = await sql.query<{ moved: number }>(
        `WITH moved AS (
           UPDATE webhook_subscriptions
           SET status = 'disabled', disabled_reason = $3, cursor_seq = $4::bigint, attempts = 0,
               last_response_status = coalesce($5::int, last_response_status), last_error = $6
           WHERE id = $1 AND cursor_seq = $2::bigint AND status = 'active'
           RETURNING id
         ), kept AS (${insertFinished('moved', 7)} RETURNING 1)
         SELECT (SELECT count(*) FROM moved)::int AS moved`,
        [
          id,
          expected.toString(),
          reason.slice(0, 500),
          to.toString(),
          lastStatus,
          error,
          ...finishedParams(failed),
        ],
      );
      return Number(rows[0]?.moved ?? 0) === 1;
    },

    /** Keeps the newest `keep` finished messages of a subscription. */
    async trimHistory(id: string, keep: number): Promise<void> {
      await sql.query(
        `DELETE FROM webhook_deliveries WHERE subscription_id = $1 AND seq < (
           SELECT seq FROM webhook_deliveries WHERE subscription_id = $1 ORDER BY seq DESC OFFSET $2 LIMIT 1)`,
        [id, keep - 1],
      );
    },
  };
}

export type SubscriptionStore = ReturnType<typeof createSubscriptionStore>;
