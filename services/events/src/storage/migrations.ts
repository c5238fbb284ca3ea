/**
 * Schema migrations, one ordered list for PostgreSQL and PGlite. Applied at start-up inside one
 * transaction holding an advisory lock, so several instances starting together apply each once.
 * Never edit an applied migration: append a new one.
 */
import type { SqlClient } from './sql-client.js';

export const MIGRATIONS: readonly { version: number; name: string; sql: readonly string[] }[] = [
  {
    version: 1,
    name: 'events table',
    sql: [
      // A global sequence: revisions (ETags) are never reused, even after delete and re-create.
      'CREATE SEQUENCE event_revision_seq',
      `CREATE TABLE events (
        event_id   text PRIMARY KEY,
        name       text NOT NULL,
        body       text NOT NULL,
        cover      text,
        date       text NOT NULL,
        date_at    timestamptz NOT NULL,
        access     text NOT NULL CHECK (access IN ('PUBLIC', 'PRIVATE')),
        created_by text NOT NULL,
        created_at timestamptz NOT NULL,
        updated_at timestamptz NOT NULL,
        revision   bigint NOT NULL DEFAULT nextval('event_revision_seq')
      )`,
      'CREATE INDEX events_list_order ON events (date_at, event_id)',
      `CREATE INDEX events_public_order ON events (date_at, event_id) WHERE access = 'PUBLIC'`,
      'CREATE INDEX events_creator ON events (created_by)',
    ],
  },
  {
    version: 2,
    name: 'change notifications for read caches',
    sql: [
      // One NOTIFY per statement (not per row); PostgreSQL folds duplicates within a transaction.
      `CREATE FUNCTION events_notify_change() RETURNS trigger LANGUAGE plpgsql AS $$
       BEGIN
         PERFORM pg_notify('events_changed', '');
         RETURN NULL;
       END $$`,
      `CREATE TRIGGER events_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON events
       FOR EACH STATEMENT EXECUTE FUNCTION events_notify_change()`,
    ],
  },
  {
    version: 3,
    name: 'event counts for list totals',
    sql: [
      // Writers wait while the counts are backfilled, so none is missed or counted twice.
      'LOCK TABLE events IN SHARE ROW EXCLUSIVE MODE',
      // Keys: 'public', 'private' (all PRIVATE events), 'private:<createdBy>'. A list total is then
      // a sum of at most two rows instead of count(*) over the table.
      `CREATE TABLE event_counts (
        scope_key text PRIMARY KEY,
        n         bigint NOT NULL
      )`,
      `CREATE FUNCTION events_count_add(access text, created_by text, delta integer) RETURNS void
       LANGUAGE plpgsql AS $$
       BEGIN
         IF access = 'PUBLIC' THEN
           INSERT INTO event_counts VALUES ('public', delta)
             ON CONFLICT (scope_key) DO UPDATE SET n = event_counts.n + delta;
         ELSE
           INSERT INTO event_counts VALUES ('private', delta), ('private:' || created_by, delta)
             ON CONFLICT (scope_key) DO UPDATE SET n = event_counts.n + delta;
         END IF;
       END $$`,
      `CREATE FUNCTION events_count_change() RETURNS trigger LANGUAGE plpgsql AS $$
       BEGIN
         IF TG_OP = 'TRUNCATE' THEN
           DELETE FROM event_counts;
           RETURN NULL;
         END IF;
         IF TG_OP IN ('UPDATE', 'DELETE') THEN
           PERFORM events_count_add(OLD.access, OLD.created_by, -1);
         END IF;
         IF TG_OP IN ('UPDATE', 'INSERT') THEN
           PERFORM events_count_add(NEW.access, NEW.created_by, 1);
         END IF;
         RETURN NULL;
       END $$`,
      `CREATE TRIGGER events_count_rows AFTER INSERT OR DELETE OR UPDATE OF access, created_by ON events
       FOR EACH ROW EXECUTE FUNCTION events_count_change()`,
      `CREATE TRIGGER events_count_truncate AFTER TRUNCATE ON events
       FOR EACH STATEMENT EXECUTE FUNCTION events_count_change()`,
      `INSERT INTO event_counts
         SELECT 'public', count(*) FROM events WHERE access = 'PUBLIC'
         UNION ALL SELECT 'private', count(*) FROM events WHERE access = 'PRIVATE'
         UNION ALL SELECT 'private:' || created_by, count(*) FROM events WHERE access = 'PRIVATE' GROUP BY created_by`,
    ],
  },
  {
    version: 4,
    name: 'opaque revisions',
    sql: [
      // The revision is the ETag; a global sequence number revealed the service-wide write count.
      // 128 random bits per write instead (gen_random_uuid is core since PostgreSQL 13 and in
      // PGlite): still never reused in practice, still a compare-and-set token, and meaningless.
      'ALTER TABLE events ALTER COLUMN revision DROP DEFAULT',
      `ALTER TABLE events ALTER COLUMN revision TYPE text USING replace(gen_random_uuid()::text, '-', '')`,
      `ALTER TABLE events ALTER COLUMN revision SET DEFAULT replace(gen_random_uuid()::text, '-', '')`,
    ],
  },
  {
    version: 5,
    name: 'indexes serving each list scope',
    sql: [
      // Members' list: the whole order (events_list_order) already serves it index-only.
      // A creator's own PRIVATE events in list order, merged with events_public_order.
      `CREATE INDEX events_private_by_creator ON events (created_by, date_at, event_id)
       WHERE access = 'PRIVATE'`,
      // Only the write path looked events up by creator; the index above covers that too.
      'DROP INDEX events_creator',
    ],
  },
  {
    version: 6,
    name: 'change notifications carry their time',
    sql: [
      // The payload is the database's clock (ms since the epoch) when the statement ran, so each
      // listener measures the change feed's lag (events_change_feed_lag_seconds). Listeners of an
      // older version ignore the payload. Different payloads are no longer folded within one
      // transaction; a statement still sends one.
      `CREATE OR REPLACE FUNCTION events_notify_change() RETURNS trigger LANGUAGE plpgsql AS $$
       BEGIN
         PERFORM pg_notify('events_changed', floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint::text);
         RETURN NULL;
       END $$`,
    ],
  },
  {
    version: 7,
    name: 'change log for sync and webhooks',
    sql: [
      // A per-event revision counter for calendar feeds (iCalendar SEQUENCE), counted by the row.
      'ALTER TABLE events ADD COLUMN sequence integer NOT NULL DEFAULT 0',
      // 'head': the last change's number. Every change takes its number by updating this row, so
      // numbers are given in commit order: a writer holds the row until it commits, the next one
      // waits, and whoever reads the head sees every change up to it committed (a plain sequence
      // hands out numbers that commit out of order, so a reader could pass one that commits
      // later). Writes already queue on the event_counts rows in the same way. 'pruned': changes
      // up to it were deleted (SYNC_RETENTION); older positions answer 410.
      `CREATE TABLE event_log_marks (
        name text PRIMARY KEY CHECK (name IN ('head', 'pruned')),
        seq  bigint NOT NULL
      )`,
      `INSERT INTO event_log_marks VALUES ('head', 0), ('pruned', 0)`,
      // One row per change of an event (kind 'event') or per test message of a webhook (kind
      // 'test', target_subscription). before_*/after_* say who could see the event before and after
      // (null access: it did not exist). The after-state's fields are kept only when a webhook
      // subscription was active at the time, for its payload (the event as GET answers it).
      `CREATE TABLE event_changes (
        seq                 bigint PRIMARY KEY,
        kind                text NOT NULL CHECK (kind IN ('event', 'test')),
        event_id            text,
        target_subscription text,
        message_id          text NOT NULL,
        changed_at          timestamptz NOT NULL,
        before_access       text,
        before_by           text,
        after_access        text,
        after_by            text,
        name                text,
        body                text,
        cover               text,
        date                text,
        created_at          timestamptz,
        updated_at          timestamptz
      )`,
      `CREATE INDEX event_changes_by_event ON event_changes (event_id, seq) WHERE kind = 'event'`,
      `CREATE TABLE webhook_subscriptions (
        id                    text PRIMARY KEY,
        owner                 text NOT NULL,
        member                boolean NOT NULL,
        url                   text NOT NULL,
        types                 text[] NOT NULL,
        status                text NOT NULL CHECK (status IN ('active', 'disabled')),
        disabled_reason       text,
        secret                text NOT NULL,
        previous_secret       text,
        previous_secret_until timestamptz,
        created_at            timestamptz NOT NULL,
        cursor_seq            bigint NOT NULL,
        attempts              integer NOT NULL DEFAULT 0,
        next_attempt_at       timestamptz NOT NULL,
        last_response_status  integer,
        last_error            text
      )`,
      'CREATE INDEX webhook_subscriptions_owner ON webhook_subscriptions (owner, created_at)',
      `CREATE INDEX webhook_subscriptions_due ON webhook_subscriptions (next_attempt_at) WHERE status = 'active'`,
      // Messages a subscription has finished with (delivered, or given up); the pending ones are
      // the changes after its cursor_seq.
      `CREATE TABLE webhook_deliveries (
        subscription_id      text NOT NULL REFERENCES webhook_subscriptions (id) ON DELETE CASCADE,
        seq                  bigint NOT NULL,
        message_id           text NOT NULL,
        type                 text NOT NULL,
        status               text NOT NULL CHECK (status IN ('delivered', 'failed')),
        attempts             integer NOT NULL,
        last_response_status integer,
        finished_at          timestamptz NOT NULL,
        PRIMARY KEY (subscription_id, seq)
      )`,
      `CREATE FUNCTION events_log_change() RETURNS trigger LANGUAGE plpgsql AS $$
       DECLARE
         s bigint;
         keep boolean;
       BEGIN
         UPDATE event_log_marks SET seq = seq + 1 WHERE name = 'head' RETURNING seq INTO s;
         -- After the head: in READ COMMITTED each statement of this (volatile) function takes a new
         -- snapshot, so a subscription created before this change's number is seen here (its
         -- creation holds the head row, see subscription-store.ts).
         keep := TG_OP <> 'DELETE' AND EXISTS (SELECT 1 FROM webhook_subscriptions WHERE status = 'active');
         IF keep THEN
           INSERT INTO event_changes (seq, kind, event_id, message_id, changed_at, before_access, before_by,
             after_access, after_by, name, body, cover, date, created_at, updated_at)
           VALUES (s, 'event', NEW.event_id, 'msg_' || replace(gen_random_uuid()::text, '-', ''), clock_timestamp(),
             OLD.access, OLD.created_by, NEW.access, NEW.created_by,
             NEW.name, NEW.body, NEW.cover, NEW.date, NEW.created_at, NEW.updated_at);
         ELSE
           INSERT INTO event_changes (seq, kind, event_id, message_id, changed_at, before_access, before_by,
             after_access, after_by)
           VALUES (s, 'event', coalesce(NEW.event_id, OLD.event_id), 'msg_' || replace(gen_random_uuid()::text, '-', ''),
             clock_timestamp(), OLD.access, OLD.created_by, NEW.access, NEW.created_by);
         END IF;
         RETURN NULL;
       END $$`,
      `CREATE TRIGGER events_log_rows AFTER INSERT OR UPDATE OR DELETE ON events
       FOR EACH ROW EXECUTE FUNCTION events_log_change()`,
      // Keys this service keeps in its database so every instance shares them (sync tokens).
      `CREATE TABLE events_keys (
        name text PRIMARY KEY,
        key  text NOT NULL
      )`,
    ],
  },
  {
    version: 8,
    name: 'calendar feeds',
    sql: [
      // The secret of a feed's URL is kept as its SHA-256 only: the URL is shown once.
      `CREATE TABLE calendar_feeds (
        id              text PRIMARY KEY,
        owner           text NOT NULL,
        token_hash      text NOT NULL UNIQUE,
        include_private boolean NOT NULL,
        from_at         timestamptz,
        to_at           timestamptz,
        created_at      timestamptz NOT NULL
      )`,
      'CREATE INDEX calendar_feeds_owner ON calendar_feeds (owner, created_at)',
    ],
  },
];

/** Arbitrary constant key of the advisory lock serialising migrations of this service. */
const MIGRATION_LOCK_KEY = 330_0001;

/** Applies pending migrations up to `target` (all by default); returns the versions applied. */
export async function migrate(client: SqlClient, target = Number.POSITIVE_INFINITY): Promise<number[]> {
  return client.transaction(async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK_KEY]);
    await tx.query(
      `CREATE TABLE IF NOT EXISTS events_schema_migrations (
        version    integer PRIMARY KEY,
        name       text NOT NULL,
        applied_at timestamptz NOT NULL DEFAULT now()
      )`,
    );
    const rows = await tx.query<{ version: number }>('SELECT version FROM events_schema_migrations');
    const applied = new Set(rows.map((row) => Number(row.version)));
    const done: number[] = [];
    for (const migration of MIGRATIONS) {
      if (applied.has(migration.version) || migration.version > target) continue;
      for (const statement of migration.sql) await tx.query(statement);
      await tx.query('INSERT INTO events_schema_migrations (version, name) VALUES ($1, $2)', [
        migration.version,
        migration.name,
      ]);
      done.push(migration.version);
    }
    return done;
  });
}
