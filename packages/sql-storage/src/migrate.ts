import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { Database } from './database.js';

/** A service's schema: its migrations folder and the advisory lock that serialises its start-ups. */
export interface Schema {
  /** Holds `NNN_name.sql` files, applied in order. */
  readonly migrationsDir: string;
  /** `pg_advisory_xact_lock` key, one per service, so two services sharing a server do not wait on each other. */
  readonly lockKey: number;
}

export interface Migration {
  readonly version: number;
  readonly name: string;
  readonly sql: string;
}

/** The versioned migrations in `dir`: `NNN_name.sql`, in order. */
export function readMigrations(dir: string): Migration[] {
  return readdirSync(dir)
    .filter((file) => /^\d{3}_[a-z0-9_]+\.sql$/.test(file))
    .sort()
    .map((file) => ({
      version: Number(file.slice(0, 3)),
      name: file.slice(4, -4),
      sql: readFileSync(path.join(dir, file), 'utf8'),
    }));
}

/**
 * Applies every migration of `schema` not yet recorded in `schema_migrations`, each in its own
 * transaction. An advisory lock makes concurrent start-ups against one PostgreSQL wait for each other.
 * Returns the versions applied now.
 */
export async function migrate(db: Database, schema: Schema): Promise<number[]> {
  // A literal key (checked here) keeps the lock statement a plain one without parameters.
  if (!Number.isSafeInteger(schema.lockKey)) throw new Error(`lockKey must be an integer: ${schema.lockKey}`);
  // Under the lock too: two `CREATE TABLE IF NOT EXISTS` racing on a fresh database both see no table
  // and the second fails on the catalog's unique index (several instances started at once did).
  await db.transaction(async (tx) => {
    await tx.query(`SELECT pg_advisory_xact_lock(${schema.lockKey})`);
    await tx.query(
      `CREATE TABLE IF NOT EXISTS schema_migrations (
         version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`,
    );
  });
  const applied: number[] = [];
  for (const migration of readMigrations(schema.migrationsDir)) {
    const done = await db.transaction(async (tx) => {
      await tx.query(`SELECT pg_advisory_xact_lock(${schema.lockKey})`);
      const { rows } = await tx.query('SELECT 1 FROM schema_migrations WHERE version = $1', [
        migration.version,
      ]);
      if (rows.length > 0) return false;
      for (const statement of splitStatements(migration.sql)) await tx.query(statement);
      await tx.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [
        migration.version,
        migration.name,
      ]);
      return true;
    });
    if (done) applied.push(migration.version);
  }
  return applied;
}

/**
 * Splits a migration into statements at a `;` that ends a line outside a `$$`-quoted function body
 * (PGlite's parameterised query takes one statement at a time). Comment lines are dropped.
 */
export function splitStatements(sql: string): string[] {
  const statements: string[] = [];
  let current: string[] = [];
  let inBody = false;
  for (const line of sql.split('\n')) {
    if (!inBody && /^\s*--/.test(line)) continue;
    current.push(line);
    // Each `$$` opens or closes a body.
    if ((line.match(/\$\$/g)?.length ?? 0) % 2 === 1) inBody = !inBody;
    if (!inBody && /;\s*$/.test(line)) {
      statements.push(current.join('\n').trim().replace(/;$/, ''));
      current = [];
    }
  }
  statements.push(current.join('\n').trim());
  return statements.filter((statement) => statement.length > 0);
}
