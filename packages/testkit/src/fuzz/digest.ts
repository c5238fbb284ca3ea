/**
 * A digest of whole tables, to show that a refused request changed nothing: one md5 over every row
 * of each table, in primary-key order (`ORDER BY 1`), compared before and after the request.
 */
import pg from 'pg';

export type Query = (sql: string) => Promise<readonly Record<string, unknown>[]>;

/** A function computing the digest of `tables` (trusted names written in the test) over `query`. */
export function tableDigest(query: Query, tables: readonly string[]): () => Promise<string> {
  const sql = `SELECT ${tables
    .map(
      (t, i) =>
        `(SELECT md5(coalesce(string_agg(r::text, '|'), '')) FROM (SELECT * FROM ${t} ORDER BY 1) r) AS d${i}`,
    )
    .join(', ')}`;
  return async () => {
    const [row] = await query(sql);
    return tables.map((t, i) => `${t}:${String(row?.[`d${i}`])}`).join(' ');
  };
}

/** A small pool on `url` for digests; `end()` it in afterAll. */
export function digestPool(url: string): { query: Query; end: () => Promise<void> } {
  const pool = new pg.Pool({ connectionString: url, max: 2 });
  return {
    query: async (sql) => (await pool.query(sql)).rows as Record<string, unknown>[],
    end: () => pool.end(),
  };
}
