import { createHash } from 'node:crypto';
import pg from 'pg';
import type { Database, Sql } from './database.js';

// int8 (count(*), bigserial ids) as JavaScript numbers, as PGlite returns them; ids stay far below 2^53.
// numeric stays a string in both drivers and is turned into bigint by the stores.
const types = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (oid === 20) return (value: string) => Number(value);
    return pg.types.getTypeParser(oid, format);
  },
};

const names = new Map<string, string>();
/**
 * Statements with parameters run as named prepared statements (pg prepares each once per
 * connection), so PostgreSQL parses and plans the ledger's and order writer's large statements once
 * rather than on every call. The name is a digest of the text, so two texts never share one.
 */
function statementName(text: string): string {
  let name = names.get(text);
  if (name === undefined) {
    name = `s${createHash('sha1').update(text).digest('hex').slice(0, 20)}`;
    names.set(text, name);
  }
  return name;
}

/** A pooled PostgreSQL connection. */
export function openPostgres(url: string, poolSize = 10): Database {
  const pool = new pg.Pool({ connectionString: url, max: poolSize, types });
  // An idle client losing its connection must not crash the process; the next query reconnects.
  pool.on('error', () => {});
  const wrap = (client: pg.PoolClient | pg.Pool): Sql => ({
    async query<Row>(text: string, params: readonly unknown[] = []) {
      const result =
        params.length > 0
          ? await client.query({ name: statementName(text), text, values: params as unknown[] })
          : await client.query(text);
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
