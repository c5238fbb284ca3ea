import pg from 'pg';
import type { Database, Sql } from './database.js';

/**
 * The type parsers of every connection: int8 (count(*), bigserial ids) as JavaScript numbers, as
 * PGlite returns them; ids stay far below 2^53. numeric stays a string in both drivers and is turned
 * into bigint by the stores.
 */
export const pgTypes = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (oid === 20) return (value: string) => Number(value);
    return pg.types.getTypeParser(oid, format);
  },
};

export interface PostgresOptions {
  /** @default 10 */
  readonly poolSize?: number;
  /**
   * Names a statement that has parameters, so that pg prepares it once per connection and runs it
   * again by name; without it, statements run unnamed (parsed and planned on every call).
   */
  readonly statementName?: (text: string) => string;
}

/** Runs one statement on a pg client, named when `statementName` is given and it has parameters. */
export function runStatement(
  client: pg.ClientBase | pg.Pool,
  text: string,
  params: readonly unknown[],
  statementName: ((text: string) => string) | undefined,
): Promise<pg.QueryResult> {
  if (params.length === 0 || statementName === undefined) return client.query(text, params as unknown[]);
  return client.query({ name: statementName(text), text, values: params as unknown[] });
}

/** A pooled PostgreSQL connection. */
export function openPostgres(url: string, options: PostgresOptions = {}): Database {
  const pool = new pg.Pool({ connectionString: url, max: options.poolSize ?? 10, types: pgTypes });
  // An idle client losing its connection must not crash the process; the next query reconnects.
  pool.on('error', () => {});
  const wrap = (client: pg.PoolClient | pg.Pool): Sql => ({
    async query<Row>(text: string, params: readonly unknown[] = []) {
      const result = await runStatement(client, text, params, options.statementName);
      return { rows: result.rows as Row[] };
    },
  });
  return {
    kind: 'postgres',
    ...wrap(pool),
    async transaction<T>(fn: (tx: Sql) => Promise<T>): Promise<T> {
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        const result = await fn(wrap(client));
        await client.query('COMMIT');
        return result;
      } catch (error) {
        await client.query('ROLLBACK').catch(() => {});
        throw error;
      } finally {
        client.release();
      }
    },
    async close() {
      await pool.end();
    },
  };
}
