import { useTestDatabase } from '@platform/testkit/fixtures';
import { afterAll, beforeAll } from 'vitest';
import type { Database } from './database.js';
import type { StorageConfig } from './open.js';

/**
 * Storage under test, opened and migrated in beforeAll, closed in afterAll: the same store runs its
 * contract suite against PostgreSQL and PGlite.
 */
export interface StorageTarget<D extends Database = Database> {
  readonly name: 'postgres' | 'pglite';
  db(): D;
}

export interface StorageTargetOptions<D extends Database> {
  /** The service's opener (it migrates). */
  open(storage: StorageConfig): Promise<D>;
  /** Prefix of the throw-away PostgreSQL database's name. */
  readonly databasePrefix: string;
  readonly poolSize: number;
  /** Runs once after opening, before the file's tests (reference data a service needs). */
  prepare?(db: D): Promise<unknown>;
}

/** The two targets of a service's storage, for its test files' `use…Target()` calls. */
export function storageTargets<D extends Database>(options: StorageTargetOptions<D>) {
  function target(name: StorageTarget['name'], storage: () => StorageConfig): StorageTarget<D> {
    let db: D | undefined;
    beforeAll(async () => {
      db = await options.open(storage());
      await options.prepare?.(db);
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
  return {
    /** A throw-away database on the real PostgreSQL server. */
    usePostgresTarget(): StorageTarget<D> {
      const database = useTestDatabase(options.databasePrefix);
      return target('postgres', () => ({ kind: 'postgres', url: database.url, poolSize: options.poolSize }));
    },
    /** An in-memory PGlite (one per test file: each costs a few seconds to start). */
    usePgliteTarget(): StorageTarget<D> {
      return target('pglite', () => ({ kind: 'pglite', dataDir: undefined }));
    },
  };
}
