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
];

/** Arbitrary constant key of the advisory lock serialising migrations of this service. */
const MIGRATION_LOCK_KEY = 330_0001;

export async function migrate(client: SqlClient): Promise<number[]> {
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
      if (applied.has(migration.version)) continue;
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
