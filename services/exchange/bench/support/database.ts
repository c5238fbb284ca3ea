import { randomBytes } from 'node:crypto';
import { createTestDatabase } from '@platform/testkit/postgres';
import { DEFAULT_REFERENCE_FILE } from '../../src/config.js';
import { createSecretBox, type SecretBox } from '../../src/crypto/secret-box.js';
import type { Database } from '../../src/db/database.js';
import { openStorage } from '../../src/db/open.js';
import { syncCurrencies } from '../../src/ledger/store.js';
import { loadReferenceData, type ReferenceData } from '../../src/reference/load.js';

/** A fresh PostgreSQL database of a benchmark, migrated, its currencies synced. */
export interface BenchDatabase {
  readonly db: Database;
  readonly reference: ReferenceData;
  readonly secretBox: SecretBox;
  /** Connection string of the database (without the session options). */
  readonly url: string;
  /** Closes the pool and drops the database. */
  close(): Promise<void>;
}

/**
 * Needs PostgreSQL (DATABASE_URL or the testkit default 127.0.0.1:5432). `asyncCommit`: every
 * connection runs with `synchronous_commit = off` (commits do not wait for the WAL flush), for a
 * bench that compares the server's own CPU cost and not the disk's flush times, which move by
 * more than the difference measured on a shared machine.
 */
export async function openBenchDatabase(
  name: string,
  poolSize = 10,
  options: { asyncCommit?: boolean } = {},
): Promise<BenchDatabase> {
  const database = await createTestDatabase(name);
  const url = new URL(database.url);
  if (options.asyncCommit) url.searchParams.set('options', '-c synchronous_commit=off');
  const db = await openStorage({ kind: 'postgres', url: url.toString(), poolSize });
  const reference = loadReferenceData(DEFAULT_REFERENCE_FILE);
  await syncCurrencies(db, reference);
  return {
    db,
    reference,
    secretBox: createSecretBox(randomBytes(32)),
    url: database.url,
    async close() {
      await db.close();
      await database.drop();
    },
  };
}
