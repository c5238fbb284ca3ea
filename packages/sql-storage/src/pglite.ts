import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import type { Database, Sql } from './database.js';

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * PGlite does not guard its directory against a second process, and two writers corrupt it: a pid
 * file next to the directory makes the second opener (an operator tool while the server runs) fail.
 */
function claim(dataDir: string): string {
  const lock = path.join(path.dirname(dataDir), `${path.basename(dataDir)}.pid`);
  try {
    const holder = Number(readFileSync(lock, 'utf8'));
    if (holder !== process.pid && holder > 0 && alive(holder)) {
      throw new Error(
        `the embedded database ${dataDir} is in use by process ${holder}; stop it first (or use DATABASE_URL)`,
      );
    }
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  writeFileSync(lock, String(process.pid));
  return lock;
}

/** The embedded database: PGlite in `dataDir`, or in memory when `dataDir` is undefined. */
export async function openPglite(dataDir: string | undefined): Promise<Database> {
  let lock: string | undefined;
  if (dataDir) {
    mkdirSync(dataDir, { recursive: true });
    lock = claim(dataDir);
  }
  const db = await PGlite.create(dataDir);
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
      if (lock) rmSync(lock, { force: true });
    },
  };
}
