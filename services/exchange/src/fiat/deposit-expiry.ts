import type { FastifyBaseLogger } from 'fastify';
import { background } from '../cluster/background.js';
import type { Database } from '../db/database.js';
import { cancelDeposit } from '../wallet/deposit-store.js';
import type { PaygateClient } from './client.js';

/**
 * Gives up fiat deposits still pending after `ttlMs` for which the gateway never reported an invoice
 * (no callback set `external_id`). The gateway is asked first: a deposit it does have an invoice for
 * is left to that invoice (it expires there and calls back); one it answers 404 for is canceled; an
 * unreachable gateway cancels nothing. Returns the ids canceled.
 */
export async function expireStaleFiatDeposits(
  deps: { db: Database; gateway: PaygateClient; log?: FastifyBaseLogger },
  ttlMs: number,
  limit = 100,
): Promise<number[]> {
  const { rows } = await deps.db.query<{ id: number; reference_id: string | null }>(
    `SELECT id, reference_id FROM deposits
      WHERE provider IS NOT NULL AND status = 'pending' AND external_id IS NULL
        AND created_at < now() - make_interval(secs => $1::double precision / 1000)
      ORDER BY id LIMIT $2`,
    [ttlMs, limit],
  );
  const canceled: number[] = [];
  for (const row of rows) {
    const invoice = await deps.gateway.invoiceStatus(row.reference_id ?? String(row.id));
    if (invoice.ok || invoice.failure.kind !== 'refused' || invoice.failure.status !== 404) continue;
    if (await cancelDeposit(deps.db, row.id)) {
      canceled.push(row.id);
      deps.log?.info({ deposit: row.id }, 'fiat deposit expired without an invoice');
    }
  }
  return canceled;
}

/** Runs `expireStaleFiatDeposits` every `everyMs` for the app's lifetime. */
export function depositExpiryLoop(
  deps: { db: Database; gateway: PaygateClient; log?: FastifyBaseLogger },
  ttlMs: number,
  everyMs = 60_000,
): { start(): void; stop(): Promise<void> } {
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<unknown> | undefined;
  return {
    start() {
      timer = setInterval(() => {
        // In a cluster one node expires deposits at a time (src/cluster/background.ts).
        if (running || !background.mayRun('fiat-deposit-expiry')) return;
        running = expireStaleFiatDeposits(deps, ttlMs)
          .catch((error: unknown) => deps.log?.error({ err: error }, 'fiat deposit expiry failed'))
          .finally(() => {
            running = undefined;
          });
      }, everyMs);
      timer.unref();
    },
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
