import { createHash } from 'node:crypto';
import pg from 'pg';
import { type Database, type OrderedSql, type Sql, sqlState } from './database.js';

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
  const wrap = (client: pg.PoolClient | pg.Pool | pg.Client): Sql => ({
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
    ordered: () => orderedConnection(url),
    async close() {
      await pool.end();
    },
  };
}

/**
 * The error means the connection is gone: no SQLSTATE (the socket failed), or class 08 (connection
 * exception) or 57 (operator intervention: the server ended the backend or is shutting down).
 */
function connectionLost(error: unknown): boolean {
  const code = sqlState(error);
  return code === undefined || code.startsWith('08') || code.startsWith('57');
}

/** `application_name` of the ordered connection (the order writers' batch statements). */
export const ORDERED_CONNECTION_NAME = 'exchange-order-writer';

/**
 * One connection outside the pool, its statements planned once (generic plans). pg queues the statements of one client and sends the next as soon
 * as the one before it completes (in the same tick as its answer arrives), so PostgreSQL starts the
 * next statement while this process is still taking up the previous answer. A connection that failed
 * is replaced on the next statement; the statements queued on it fail with its error.
 */
function orderedConnection(url: string): OrderedSql {
  let current: { client: pg.Client; ready: Promise<void>; retire: () => void } | undefined;
  const connect = () => {
    // The order writers' batch statement is one large statement run with new values every time:
    // left to choose, PostgreSQL plans it again on nearly every call (186 µs of a batch's
    // 600 µs with one order, measured with pg_stat_statements). Its plan does not depend on the
    // values (arrays unnested, keyed lookups), so it is planned once per connection.
    const client = new pg.Client({
      connectionString: url,
      types,
      options: '-c plan_cache_mode=force_generic_plan',
      // Named in pg_stat_activity, so an operator (or a test) can tell the writers' connection.
      application_name: ORDERED_CONNECTION_NAME,
    });
    const opened = { client, ready: client.connect().then(() => undefined), retire: () => {} };
    opened.retire = () => {
      if (current !== opened) return;
      current = undefined;
      client.end().catch(() => {});
    };
    // A lost connection must not crash the process: queued statements reject, the next one reconnects.
    client.on('error', opened.retire);
    client.on('end', opened.retire);
    opened.ready.catch(opened.retire);
    current = opened;
    return opened;
  };
  return {
    async query<Row>(text: string, params: readonly unknown[] = []) {
      const opened = current ?? connect();
      // Queued on the client synchronously when connected, so statements keep the order of the calls.
      const pending =
        params.length > 0
          ? opened.client.query({ name: statementName(text), text, values: params as unknown[] })
          : opened.client.query(text);
      try {
        const [, result] = await Promise.all([opened.ready, pending]);
        return { rows: result.rows as Row[] };
      } catch (error) {
        // The client's 'end' comes a turn later than this error; the caller's next statement must
        // not be queued on the dead connection meanwhile.
        if (connectionLost(error)) opened.retire();
        throw error;
      }
    },
    async release() {
      const opened = current;
      current = undefined;
      await opened?.client.end().catch(() => {});
    },
  };
}
