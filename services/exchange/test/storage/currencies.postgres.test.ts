import { createTestDatabase, type TestDatabase } from '@platform/testkit/postgres';
import { afterEach, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.js';
import { openStorage } from '../../src/db/open.js';
import { syncCurrencies } from '../../src/ledger/store.js';
import { reference } from '../support/targets.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function freshDatabase(): Promise<TestDatabase> {
  const database = await createTestDatabase('currency_sync');
  cleanups.push(() => database.drop());
  return database;
}

// Cluster nodes started together on a new database each record the currencies at start: before the
// upsert, all saw an empty table and all but one failed on currencies_pkey (the README's three-node
// Try-it, pasted as written).
describe('recording the currencies (postgres)', () => {
  it('several processes at once on a new database: none fails, each currency is recorded once', async () => {
    for (let round = 0; round < 5; round += 1) {
      const database = await freshDatabase();
      // Each its own pool, as separate processes; the first migrates so the race is on the currencies.
      const first = await openStorage({ kind: 'postgres', url: database.url, poolSize: 1 });
      const instances: Database[] = [first];
      for (let i = 1; i < 6; i += 1)
        instances.push(await openStorage({ kind: 'postgres', url: database.url, poolSize: 1 }));
      cleanups.push(() => Promise.all(instances.map((db) => db.close())).then(() => undefined));
      await Promise.all(instances.map((db) => syncCurrencies(db, reference)));
      const { rows } = await first.query<{ code: string; n: number }>(
        'SELECT code, count(*)::int AS n FROM currencies GROUP BY code ORDER BY code',
      );
      expect(rows).toEqual(
        reference.currencies
          .map((c) => ({ code: c.code, n: 1 }))
          .sort((a, b) => a.code.localeCompare(b.code)),
      );
    }
  }, 120_000);

  it('still refuses a precision that differs from the recorded one', async () => {
    const database = await freshDatabase();
    const db = await openStorage({ kind: 'postgres', url: database.url, poolSize: 1 });
    cleanups.push(() => db.close());
    await syncCurrencies(db, reference);
    const changed = {
      currencies: reference.currencies,
      ledgerPrecision: (code: string) => reference.ledgerPrecision(code) + (code === 'btc' ? 1 : 0),
    };
    await expect(syncCurrencies(db, changed)).rejects.toThrow(/currency btc: the ledger precision is/);
  });
});
