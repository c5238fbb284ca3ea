import { randomBytes } from 'node:crypto';
import { type StorageTarget, storageTargets } from '@platform/sql-storage/targets';
import { DEFAULT_REFERENCE_FILE } from '../../src/config.js';
import { createSecretBox, type SecretBox } from '../../src/crypto/secret-box.js';
import type { Database } from '../../src/db/database.js';
import { openStorage } from '../../src/db/open.js';
import { syncCurrencies } from '../../src/ledger/store.js';
import { loadReferenceData, type ReferenceData } from '../../src/reference/load.js';

export const reference: ReferenceData = loadReferenceData(DEFAULT_REFERENCE_FILE);
export const secretBox: SecretBox = createSecretBox(randomBytes(32));

/** Storage under test, opened and migrated in beforeAll (currencies synced), closed in afterAll. */
export type Target = StorageTarget<Database>;

export const { usePostgresTarget, usePgliteTarget } = storageTargets({
  open: openStorage,
  databasePrefix: 'exchange',
  poolSize: 20,
  prepare: (db) => syncCurrencies(db, reference),
});
