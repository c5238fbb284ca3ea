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
