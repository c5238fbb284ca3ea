import { createHash } from 'node:crypto';
import { pgTypes, runStatement } from '@platform/sql-storage/postgres';
import pg from 'pg';
import { type OrderedSql, sqlState } from './database.js';

// The exchange's additions to the shared pool (@platform/sql-storage/postgres): named prepared
// statements and the order writers' ordered connection.

const names = new Map<string, string>();
/**
 * Statements with parameters run as named prepared statements (pg prepares each once per
 * connection), so PostgreSQL parses and plans the ledger's and order writer's large statements once
 * rather than on every call. The name is a digest of the text, so two texts never share one.
 */
export function statementName(text: string): string {
  let name = names.get(text);
  if (name === undefined) {
    name = `s${createHash('sha1').update(text).digest('hex').slice(0, 20)}`;
    names.set(text, name);
  }
  return name;
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
export function orderedConnection(url: string): OrderedSql {
  let current: { client: pg.Client; ready: Promise<void>; retire: () => void } | undefined;
  const connect = () => {
    // The order writers' batch statement is one large statement run with new values every time:
    // left to choose, PostgreSQL plans it again on nearly every call (186 µs of a batch's
    // 600 µs with one order, measured with pg_stat_statements). Its plan does not depend on the
    // values (arrays unnested, keyed lookups), so it is planned once per connection.
    const client = new pg.Client({
      connectionString: url,
      types: pgTypes,
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
      const pending = runStatement(opened.client, text, params, statementName);
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
