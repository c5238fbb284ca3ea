import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { withStatementSpans } from '@platform/observability/client-spans';
import { claimLock, releaseLock } from '@platform/sql-storage/process-lock';
import type { SqlClient, SqlQueryable } from './sql-client.js';

/**
 * PGlite (PostgreSQL compiled to WebAssembly) in this process: the embedded default. `dir` is the
 * data directory, created when missing; `undefined` keeps the database in memory (tests, benches).
 *
 * PGlite does not guard its directory against a second process, and two writers corrupt it: the
 * lock file `<dir>.pid` (the one the exchange and the gateway take, `@platform/sql-storage/
 * process-lock`, and the launcher checks before a start) makes a second opener fail with a
 * `LockHeldError` naming the holder; it records the holder's pid and start time, so a restart right
 * after a crash (the holder dead, or a zombie not yet reaped) takes it over.
 */
export async function createPgliteClient(dir: string | undefined): Promise<SqlClient> {
  let lock: string | undefined;
  if (dir !== undefined) {
    await mkdir(dir, { recursive: true });
    lock = path.join(path.dirname(dir), `${path.basename(dir)}.pid`);
    claimLock(
      lock,
      (pid) =>
        `the embedded database ${dir} is in use by process ${pid}; stop it first (or use DATABASE_URL)`,
    );
  }
  const db = await PGlite.create(dir === undefined ? undefined : { dataDir: dir }).catch((error: unknown) => {
    if (lock) releaseLock(lock);
    throw error;
  });
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
      if (lock) releaseLock(lock);
    },
  };
}
