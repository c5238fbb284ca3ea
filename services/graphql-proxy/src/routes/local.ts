import type { FastifyInstance } from 'fastify';
import { HttpError } from '../errors.js';
import type { LocalDb } from '../local/local-db.js';
import type { SyncResult } from '../local/sync.js';

/** `POST /local/sync` (sync from upstream now) and `GET /local/data` (the local collections). */
export function localRoutes(
  app: FastifyInstance,
  deps: { local: LocalDb; sync: () => Promise<SyncResult> },
): void {
  app.post('/local/sync', async () => {
    const result = await deps.sync();
    if (!result.ok) {
      // 503 so a client sees that the data did not change; the old local data is kept.
      // The reason (upstream address, error text) is logged by the local db, not sent to the caller.
      throw new HttpError('UPSTREAM_UNAVAILABLE', 'Local sync failed; the local data was kept unchanged');
    }
    const { lastUpdated: _last, ...counts } = deps.local.counts();
    return {
      message: 'Local data synchronised from the upstream',
      counts,
      lastUpdated: deps.local.lastUpdated,
    };
  });

  app.get('/local/data', async () => ({ data: { ...deps.local.data, lastUpdated: deps.local.lastUpdated } }));
}
