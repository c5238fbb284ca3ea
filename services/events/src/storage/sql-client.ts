/**
 * The slice of a PostgreSQL connection the event store needs. Two implementations run the same SQL:
 * `pg` against a server (`DATABASE_URL`) and PGlite in-process (the embedded default).
 */

export interface SqlQueryable {
  query<Row>(sql: string, params?: readonly unknown[]): Promise<Row[]>;
}

export interface SqlClient extends SqlQueryable {
  /** Runs `work` inside BEGIN/COMMIT on one connection, rolling back when it throws. */
  transaction<T>(work: (tx: SqlQueryable) => Promise<T>): Promise<T>;
  /** Answers whether the database is reachable (for `/health`). */
  ping(): Promise<void>;
  close(): Promise<void>;
}
