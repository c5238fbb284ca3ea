import type { Database } from '@platform/sql-storage/database';
import { type StorageTarget, storageTargets } from '@platform/sql-storage/targets';
import { openStorage } from '../../src/db/open.js';

/** Storage under test, opened and migrated in beforeAll, closed in afterAll. */
export type Target = StorageTarget<Database>;

export const { usePostgresTarget, usePgliteTarget } = storageTargets({
  open: openStorage,
  databasePrefix: 'paygate',
  poolSize: 10,
});
