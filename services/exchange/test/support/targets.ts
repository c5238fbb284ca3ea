import { randomBytes } from 'node:crypto';
import { useTestDatabase } from '@platform/testkit/fixtures';
import { afterAll, beforeAll } from 'vitest';
import { DEFAULT_REFERENCE_FILE } from '../../src/config.js';
import { createSecretBox, type SecretBox } from '../../src/crypto/secret-box.js';
import type { Database } from '../../src/db/database.js';
import { openStorage } from '../../src/db/open.js';
import { syncCurrencies } from '../../src/ledger/store.js';
import { loadReferenceData, type ReferenceData } from '../../src/reference/load.js';

/** Storage under test, opened and migrated in beforeAll, closed in afterAll. */
export interface Target {
  readonly name: 'postgres' | 'pglite';
  db(): Database;
}

export const reference: ReferenceData = loadReferenceData(DEFAULT_REFERENCE_FILE);
export const secretBox: SecretBox = createSecretBox(randomBytes(32));

function target(name: Target['name'], open: () => Promise<Database>): Target {
  let db: Database | undefined;
  beforeAll(async () => {
    db = await open();
    await syncCurrencies(db, reference);
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
  const database = useTestDatabase('exchange');
  return target('postgres', () => openStorage({ kind: 'postgres', url: database.url, poolSize: 20 }));
}

/** An in-memory PGlite (one per test file: each costs a few seconds to start). */
export function usePgliteTarget(): Target {
  return target('pglite', () => openStorage({ kind: 'pglite', dataDir: undefined }));
}
