import { randomBytes } from 'node:crypto';
import pg from 'pg';

/** The server the testkit uses: DATABASE_URL when set, otherwise the local server on 127.0.0.1:5432. */
export function postgresAdminUrl(): string {
  return process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
}

export interface TestDatabase {
  /** Connection string of the new, empty database. */
  readonly url: string;
  readonly name: string;
  /** Drops the database, closing any connections still open to it. */
  drop(): Promise<void>;
}

function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}

async function admin<T>(fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: postgresAdminUrl(), connectionTimeoutMillis: 5_000 });
  try {
    await client.connect();
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new Error(
      `cannot reach PostgreSQL at ${postgresAdminUrl()} (${reason}). Set DATABASE_URL or install and start ` +
        `the Debian package postgresql.`,
    );
  }
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/**
 * Creates a throw-away database on the test server with a random name, so test files can run in
 * parallel without seeing each other's rows. Pair with `drop()` in afterAll (or use `useTestDatabase`).
 */
export async function createTestDatabase(prefix = 't'): Promise<TestDatabase> {
  const name = `${prefix}_${Date.now().toString(36)}_${randomBytes(4).toString('hex')}`.toLowerCase();
  await admin((client) => client.query(`CREATE DATABASE "${name}"`));
  return {
    name,
    url: withDatabase(postgresAdminUrl(), name),
    async drop() {
      await admin((client) => client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`));
    },
  };
}
