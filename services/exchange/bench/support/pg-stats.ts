import { readFileSync } from 'node:fs';
import pg from 'pg';

/**
 * What PostgreSQL did during one phase of a bench (issue 46): the statements of the bench's database
 * from `pg_stat_statements` (calls, rows, execution time, WAL) and the WAL the whole server wrote
 * (`pg_current_wal_insert_lsn` delta). Only on a server that loads the extension
 * (`shared_preload_libraries = pg_stat_statements`); the machine's shared server does not, so the
 * bench is pointed at a server of its own for these figures (services/exchange/README.md, Benchmark).
 */
export interface StatementFigures {
  readonly query: string;
  readonly calls: number;
  readonly rows: number;
  readonly execMs: number;
  readonly walBytes: number;
  readonly walRecords: number;
  readonly walFpi: number;
  readonly blocksDirtied: number;
}

export interface PhaseStatements {
  readonly statements: readonly StatementFigures[];
  /** WAL bytes the whole server inserted during the phase (every database, checkpoints included). */
  readonly serverWalBytes: number;
}

export interface PgStats {
  /** Starts a phase: the statement counters are reset and the WAL position taken. */
  begin(): Promise<void>;
  /** What the bench's database ran since `begin`, the busiest statements first. */
  end(): Promise<PhaseStatements>;
  close(): Promise<void>;
}

/**
 * Connects to the server of `databaseUrl` as its admin database (`postgres`), or returns undefined
 * when `pg_stat_statements` cannot record there (not preloaded).
 */
export async function openPgStats(databaseUrl: string): Promise<PgStats | undefined> {
  const target = new URL(databaseUrl);
  const database = decodeURIComponent(target.pathname.slice(1));
  const admin = new URL(databaseUrl);
  admin.pathname = '/postgres';
  const client = new pg.Client({ connectionString: admin.toString() });
  await client.connect();
  try {
    const preload = await client.query<{ setting: string }>(
      "SELECT setting FROM pg_settings WHERE name = 'shared_preload_libraries'",
    );
    if (!preload.rows[0]?.setting.includes('pg_stat_statements')) {
      await client.end();
      return undefined;
    }
    await client.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
  } catch (error) {
    await client.end();
    throw error;
  }
  let startLsn = '0/0';
  return {
    async begin() {
      await client.query('SELECT pg_stat_statements_reset()');
      startLsn = (await client.query<{ lsn: string }>('SELECT pg_current_wal_insert_lsn()::text AS lsn'))
        .rows[0]!.lsn;
    },
    async end() {
      const wal = await client.query<{ bytes: string }>(
        'SELECT pg_wal_lsn_diff(pg_current_wal_insert_lsn(), $1::pg_lsn)::text AS bytes',
        [startLsn],
      );
      const { rows } = await client.query<{
        query: string;
        calls: string;
        rows: string;
        exec_ms: number;
        wal_bytes: string;
        wal_records: string;
        wal_fpi: string;
        dirtied: string;
      }>(
        `SELECT s.query, s.calls::text, s.rows::text, s.total_exec_time AS exec_ms, s.wal_bytes::text,
                s.wal_records::text, s.wal_fpi::text, s.shared_blks_dirtied::text AS dirtied
           FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid
          WHERE d.datname = $1 AND s.toplevel
          ORDER BY s.total_exec_time DESC`,
        [database],
      );
      return {
        serverWalBytes: Number(wal.rows[0]!.bytes),
        statements: rows.map((row) => ({
          query: row.query,
          calls: Number(row.calls),
          rows: Number(row.rows),
          execMs: row.exec_ms,
          walBytes: Number(row.wal_bytes),
          walRecords: Number(row.wal_records),
          walFpi: Number(row.wal_fpi),
          blocksDirtied: Number(row.dirtied),
        })),
      };
    },
    async close() {
      await client.end();
    },
  };
}

/**
 * The process ids of one PostgreSQL server (its postmaster and the postmaster's children), found from
 * the server's `data_directory`/postmaster.pid; undefined when that file cannot be read here (a
 * remote server), in which case a bench counts every `postgres` process of the machine.
 */
export async function postmasterPid(databaseUrl: string): Promise<number | undefined> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ setting: string }>(
      "SELECT current_setting('data_directory') AS setting",
    );
    const pid = Number(readFileSync(`${rows[0]!.setting}/postmaster.pid`, 'utf8').split('\n')[0]);
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  } finally {
    await client.end();
  }
}
