/**
 * The SQLSTATE of an error the database reported, or undefined when it did not come from the database
 * (a failed socket, a client-side error): then a statement's outcome is unknown.
 */
export function sqlState(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) ? code : undefined;
}

/** The SQL surface the stores use; PostgreSQL (pg) and PGlite both implement it. */
export interface Sql {
  query<Row = Record<string, unknown>>(text: string, params?: readonly unknown[]): Promise<{ rows: Row[] }>;
}

export interface Database extends Sql {
  readonly kind: 'postgres' | 'pglite';
  /**
   * Runs `fn` in one READ COMMITTED transaction; commits when it resolves, rolls back when it throws.
   * Row locks taken inside serialise concurrent writers on PostgreSQL; PGlite runs one transaction at a time.
   */
  transaction<T>(fn: (tx: Sql) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}
