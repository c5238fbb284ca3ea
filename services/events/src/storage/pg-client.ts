import pg from 'pg';
import type { SqlClient, SqlQueryable } from './sql-client.js';

export interface PgClientOptions {
  url: string;
  poolMax: number;
  /** Called with errors of idle pooled connections (a restarted server), which must not crash the process. */
  onIdleError?: (error: Error) => void;
  /**
   * `false` runs the pool's sessions with `synchronous_commit = off`: a commit returns before its WAL
   * is flushed (PostgreSQL flushes it within `wal_writer_delay`), so it adds no flush of its own.
   * Only for work whose loss at a crash is harmless (the webhook senders' progress: lost, the
   * messages are sent again). @default true
   */
  synchronousCommit?: boolean;
  /** `application_name` of the pool's sessions. */
  applicationName?: string;
}

/** A pooled `pg` connection to a PostgreSQL server. */
export function createPgClient(options: PgClientOptions): SqlClient {
  const pool = new pg.Pool({
    connectionString: options.url,
    max: options.poolMax,
    connectionTimeoutMillis: 5_000,
    ...(options.synchronousCommit === false ? { options: '-c synchronous_commit=off' } : {}),
    ...(options.applicationName === undefined ? {} : { application_name: options.applicationName }),
  });
  pool.on('error', (error) => options.onIdleError?.(error));

  // Named (prepared) statements: each connection parses and plans a statement once, not per call.
  // The store's SQL is a small fixed set, so this map stays small.
  const names = new Map<string, string>();
  const nameOf = (sql: string): string => {
    let name = names.get(sql);
    if (name === undefined) {
      name = `events_q${names.size + 1}`;
      names.set(sql, name);
    }
    return name;
  };

  const query = async <Row>(sql: string, params?: readonly unknown[]): Promise<Row[]> => {
    const result = await pool.query({
      name: nameOf(sql),
      text: sql,
      values: params as unknown[] | undefined,
    });
    return result.rows as Row[];
  };

  return {
    query,
    async transaction<T>(work: (tx: SqlQueryable) => Promise<T>): Promise<T> {
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        const tx: SqlQueryable = {
          async query<Row>(sql: string, params?: readonly unknown[]) {
            return (await client.query(sql, params as unknown[] | undefined)).rows as Row[];
          },
        };
        const result = await work(tx);
        await client.query('COMMIT');
        return result;
      } catch (error) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw error;
      } finally {
        client.release();
      }
    },
    async ping() {
      await pool.query('SELECT 1');
    },
    async close() {
      await pool.end();
    },
  };
}
