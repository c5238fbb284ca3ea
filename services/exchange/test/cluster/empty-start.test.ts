import { useTestDatabase } from '@platform/testkit/fixtures';
import { until } from '@platform/testkit/wait';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.js';
import { openStorage } from '../../src/db/open.js';
import { reference } from '../support/targets.js';
import { fundedTraders, ownerOf, placeLimit, startExchangeCluster } from './cluster-support.js';

// An operator's first cluster: three nodes started at the same moment on a database nothing has
// touched (the README's "Running a cluster" does this). Every start-up step that writes shared rows
// (migrations, the currency table, leases) meets the others' at once; none may fail on a duplicate
// key. The other cluster tests prepare the database first, so they could not see this.
const database = useTestDatabase('exchange_cluster_empty');

describe('nodes started together on an empty database', () => {
  let db: Database;
  let cluster: Awaited<ReturnType<typeof startExchangeCluster>> | undefined;

  beforeAll(async () => {
    db = await openStorage({ kind: 'postgres', url: database.url, poolSize: 2 });
  });
  afterAll(async () => {
    await cluster?.close();
    await db?.close();
  }, 60_000);

  it('all start, the currencies are recorded once, and every market is written and takes orders on every node', async () => {
    cluster = await startExchangeCluster(3, database.url);
    const { rows } = await db.query<{ code: string }>('SELECT code FROM currencies ORDER BY code');
    expect(rows.map((row) => row.code)).toEqual(reference.currencies.map((c) => c.code).sort());
    const markets = reference.markets.map((m) => m.id);
    for (const market of markets)
      await until(`an owner of ${market}`, () => ownerOf(db, market), 30_000, 200);
    const [trader] = await fundedTraders(db, 1);
    for (const node of cluster.nodes) {
      // The traders hold uah to buy with.
      for (const market of reference.markets.filter((m) => m.quote_unit === 'uah').map((m) => m.id)) {
        const placed = await placeLimit(node.url, trader!, market, 'buy');
        expect(placed.status, `${node.id} ${market}: ${placed.body}`).toBe(201);
      }
    }
  }, 300_000);
});
