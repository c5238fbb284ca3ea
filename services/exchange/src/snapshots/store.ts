import type { Database, Sql } from '../db/database.js';

/** Writes a market's snapshot in one transaction and deletes all but the newest `keep`. */
export async function saveSnapshot(
  db: Database,
  market: string,
  seq: number,
  bytes: Buffer,
  keep: number,
  /** Runs inside the transaction after the row is written (test fail point). */
  beforeCommit?: (tx: Sql) => Promise<void>,
): Promise<void> {
  await db.transaction(async (tx) => {
    await tx.query(
      'INSERT INTO book_snapshots (market, seq, snapshot) VALUES ($1, $2, $3) ON CONFLICT (market, seq) DO NOTHING',
      [market, seq, bytes],
    );
    await tx.query(
      `DELETE FROM book_snapshots WHERE market = $1 AND seq < (
         SELECT min(seq) FROM (SELECT seq FROM book_snapshots WHERE market = $1 ORDER BY seq DESC LIMIT $2) newest)`,
      [market, keep],
    );
    await beforeCommit?.(tx);
  });
}

/** Sequence numbers of a market's stored snapshots, newest first. */
export async function snapshotSeqs(db: Sql, market: string): Promise<number[]> {
  const { rows } = await db.query<{ seq: string }>(
    'SELECT seq::text AS seq FROM book_snapshots WHERE market = $1 ORDER BY seq DESC',
    [market],
  );
  return rows.map((row) => Number(row.seq));
}

export async function snapshotBytes(db: Sql, market: string, seq: number): Promise<Uint8Array | undefined> {
  const { rows } = await db.query<{ snapshot: Uint8Array }>(
    'SELECT snapshot FROM book_snapshots WHERE market = $1 AND seq = $2',
    [market, seq],
  );
  return rows[0]?.snapshot;
}

/** Whether the command log has a batch ending at `seq`: a snapshot must sit on a batch boundary. */
export async function batchEndsAt(db: Sql, market: string, seq: number): Promise<boolean> {
  const { rows } = await db.query<{ found: boolean }>(
    'SELECT EXISTS (SELECT 1 FROM engine_commands WHERE market = $1 AND seq = $2) AS found',
    [market, seq],
  );
  return rows[0]?.found === true;
}
