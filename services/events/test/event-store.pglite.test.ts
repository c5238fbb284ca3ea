import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createCachedEventStore } from '../src/storage/cached-event-store.js';
import { openEventStore } from '../src/storage/open-store.js';
import { eventStoreContract } from './event-store.contract.js';
import { openPgliteStore } from './helpers.js';

eventStoreContract('PGlite', openPgliteStore);
eventStoreContract('PGlite behind the read cache', async () =>
  createCachedEventStore(await openPgliteStore(), { maxEntries: 3 }),
);

describe('PGlite on disk', () => {
  it('keeps events across a reopen and does not re-run migrations', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'events-pglite-'));
    try {
      const first = await openEventStore({ kind: 'pglite', dir }, { cacheMaxEntries: 100 });
      await first.insert(
        'kept',
        { name: 'n', body: 'b', cover: null, date: '2026-01-01T00:00:00Z', access: 'PUBLIC' },
        'alice',
        new Date('2026-01-01T00:00:00Z'),
      );
      await first.close();
      const second = await openEventStore({ kind: 'pglite', dir }, { cacheMaxEntries: 100 });
      expect((await second.get('kept'))?.createdBy).toBe('alice');
      await second.close();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
