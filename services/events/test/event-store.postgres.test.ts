import { useTestDatabase } from '@platform/testkit/fixtures';
import { describe, expect, it } from 'vitest';
import { migrate } from '../src/storage/migrations.js';
import { createPgClient } from '../src/storage/pg-client.js';
import { eventStoreContract } from './event-store.contract.js';
import { openPostgresStore } from './helpers.js';

const db = useTestDatabase('events');

eventStoreContract('PostgreSQL', () => openPostgresStore(db.url));

describe('migrations on PostgreSQL', () => {
  it('apply once even when several instances start together', async () => {
    const clients = [1, 2, 3].map(() => createPgClient({ url: db.url, poolMax: 2 }));
    try {
      const applied = await Promise.all(clients.map((client) => migrate(client)));
      // The contract suite may have migrated first; in any case no migration ran twice.
      expect(applied.flat().filter((version) => version === 1).length).toBeLessThanOrEqual(1);
      const rows = await clients[0]!.query<{ n: string }>(
        'SELECT count(*) AS n FROM events_schema_migrations',
      );
      expect(Number(rows[0]?.n)).toBe(1);
    } finally {
      await Promise.all(clients.map((client) => client.close()));
    }
  });
});
