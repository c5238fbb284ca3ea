import { useTestDatabase } from '@platform/testkit/fixtures';
import { afterAll, beforeAll } from 'vitest';
import type { Database } from '../../src/db/database.js';
import { openStorage } from '../../src/db/open.js';

/** Storage under test, opened and migrated in beforeAll, closed in afterAll. */
export interface Target {
  readonly name: 'postgres' | 'pglite';
  db(): Database;
}

function target(name: Target['name'], open: () => Promise<Database>): Target {
  let db: Database | undefined;
  beforeAll(async () => {
    db = await open();
  });
  afterAll(async () => {
    await db?.close();
  });
  return {
    name,
    db() {
      if (!db) throw new Error('storage is not open yet');
      return db;
    },
  };
}

/** A throw-away database on the real PostgreSQL server. */
export function usePostgresTarget(): Target {
  const database = useTestDatabase('paygate');
  return target('postgres', () => openStorage({ kind: 'postgres', url: database.url, poolSize: 10 }));
}

/** An in-memory PGlite. */
export function usePgliteTarget(): Target {
  return target('pglite', () => openStorage({ kind: 'pglite', dataDir: undefined }));
}
