import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createTestDatabase } from '@platform/testkit/postgres';
import { afterEach, describe, expect, it } from 'vitest';
import type { Database } from '../src/database.js';
import { migrate } from '../src/migrate.js';
import { openPostgres } from '../src/postgres.js';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe('migrations on PostgreSQL', () => {
  it('several processes starting at once on a fresh database: one applies each migration, none fails', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'migrations-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    writeFileSync(path.join(dir, '001_first.sql'), 'CREATE TABLE first (id int PRIMARY KEY);\n');
    writeFileSync(path.join(dir, '002_second.sql'), 'CREATE TABLE second (id int PRIMARY KEY);\n');
    const schema = { migrationsDir: dir, lockKey: 915_001 };
    // Fresh databases, several rounds: the race is on the very first statement of a fresh database.
    for (let round = 0; round < 5; round += 1) {
      const database = await createTestDatabase('migrate_race');
      cleanups.push(() => database.drop());
      // Each instance has its own pool, as separate processes would.
      const instances: Database[] = Array.from({ length: 8 }, () =>
        openPostgres(database.url, { poolSize: 1 }),
      );
      cleanups.push(() => Promise.all(instances.map((db) => db.close())).then(() => undefined));
      const applied = await Promise.all(instances.map((db) => migrate(db, schema)));
      expect(applied.flat().sort()).toEqual([1, 2]);
      const { rows } = await instances[0]!.query<{ version: number }>(
        'SELECT version FROM schema_migrations ORDER BY version',
      );
      expect(rows.map((row) => row.version)).toEqual([1, 2]);
    }
  });
});
