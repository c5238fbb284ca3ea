import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import type { Database, Sql } from './database.js';
import { claimLock, releaseLock } from './process-lock.js';

/**
 * PGlite does not guard its directory against a second process, and two writers corrupt it: a lock
 * file next to the directory makes the second opener (an operator tool while the server runs) fail.
 * It names the holder's pid and start time, so a restart right after a crash (the killed holder dead
 * or a not yet reaped zombie) takes it over (`process-lock.ts`).
 */
function claim(dataDir: string): string {
  const lock = path.join(path.dirname(dataDir), `${path.basename(dataDir)}.pid`);
  claimLock(
    lock,
    (pid) =>
      `the embedded database ${dataDir} is in use by process ${pid}; stop it first (or use DATABASE_URL)`,
  );
  return lock;
}

/** The embedded database: PGlite in `dataDir`, or in memory when `dataDir` is undefined. */
export async function openPglite(dataDir: string | undefined): Promise<Database> {
  let lock: string | undefined;
  if (dataDir) {
    mkdirSync(dataDir, { recursive: true });
    lock = claim(dataDir);
  }
  const db = await PGlite.create(dataDir).catch((error: unknown) => {
    if (lock) releaseLock(lock);
    throw error;
  });
  const wrap = (client: Pick<PGlite, 'query'>): Sql => ({
    async query<Row>(text: string, params: readonly unknown[] = []) {
      const result = await client.query<Row>(text, params as unknown[]);
      return { rows: result.rows };
    },
  });
  return {
    kind: 'pglite',
    ...wrap(db),
    transaction: <T>(fn: (tx: Sql) => Promise<T>) => db.transaction((tx) => fn(wrap(tx))),
    async close() {
      await db.close();
      if (lock) releaseLock(lock);
    },
  };
}
