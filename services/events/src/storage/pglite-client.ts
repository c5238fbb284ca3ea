import { mkdir } from 'node:fs/promises';
import { PGlite } from '@electric-sql/pglite';
import { withStatementSpans } from '@platform/observability/client-spans';
import type { SqlClient, SqlQueryable } from './sql-client.js';

/**
 * PGlite (PostgreSQL compiled to WebAssembly) in this process: the embedded default. `dir` is the
 * data directory, created when missing; `undefined` keeps the database in memory (tests, benches).
 */
export async function createPgliteClient(dir: string | undefined): Promise<SqlClient> {
  if (dir !== undefined) await mkdir(dir, { recursive: true });
  const db = await PGlite.create(dir === undefined ? undefined : { dataDir: dir });
  // Each statement is a span of the request's trace when tracing is on (no instrumentation knows PGlite).
  const query = withStatementSpans('events', <Row>(sql: string, params?: readonly unknown[]) =>
    db.query<Row>(sql, params as unknown[] | undefined),
  );

  return {
    async query<Row>(sql: string, params?: readonly unknown[]) {
      return (await query<Row>(sql, params)).rows;
    },
    transaction<T>(work: (tx: SqlQueryable) => Promise<T>): Promise<T> {
      return db.transaction((tx) => {
        const txQuery = withStatementSpans('events', <Row>(sql: string, params?: readonly unknown[]) =>
          tx.query<Row>(sql, params as unknown[] | undefined),
        );
        return work({
          async query<Row>(sql: string, params?: readonly unknown[]) {
            return (await txQuery<Row>(sql, params)).rows;
          },
        });
      });
    },
    async ping() {
      await db.query('SELECT 1');
    },
    async close() {
      await db.close();
    },
  };
}
