import type { FastifyBaseLogger } from 'fastify';
import { background } from '../cluster/background.js';
import type { Database } from '../db/database.js';
import type { ReferenceData } from '../reference/load.js';
import { cancelDeposit } from '../wallet/deposit-store.js';
import { invoiceIsDeposits } from './callbacks.js';
import type { PaygateClient } from './client.js';

interface ExpiryDeps {
  readonly db: Database;
  readonly gateway: PaygateClient;
  readonly reference: ReferenceData;
  readonly log?: FastifyBaseLogger;
}

/**
 * Gives up fiat deposits still pending after `ttlMs` for which the gateway never reported an invoice
 * (no callback set `external_id`). The gateway is asked first: a deposit it does have an invoice for
 * is left to that invoice (it expires there and calls back); one it answers 404 for is canceled, and
 * so is one whose reference holds an invoice of another amount or currency (someone else's, made with
 * the spec's unsigned body before the payer's: it can never credit the deposit, and the payer's own
 * create was refused); an unreachable gateway cancels nothing. Returns the ids canceled.
 */
export async function expireStaleFiatDeposits(
  deps: ExpiryDeps,
  ttlMs: number,
  limit = 100,
): Promise<number[]> {
  const { rows } = await deps.db.query<{
    id: number;
    reference_id: string | null;
    currency: string;
    amount: string;
  }>(
    `SELECT id, reference_id, currency, amount::text AS amount FROM deposits
      WHERE provider IS NOT NULL AND status = 'pending' AND external_id IS NULL
        AND created_at < now() - make_interval(secs => $1::double precision / 1000)
      ORDER BY id LIMIT $2`,
    [ttlMs, limit],
  );
  const canceled: number[] = [];
  for (const row of rows) {
    const invoice = await deps.gateway.invoiceStatus(row.reference_id ?? String(row.id));
    const deposit = { currency: row.currency, amount: BigInt(row.amount) };
    const notOurs = invoice.ok && !invoiceIsDeposits(deps.reference, deposit, invoice.value);
    const none = !invoice.ok && invoice.failure.kind === 'refused' && invoice.failure.status === 404;
    if (!none && !notOurs) continue;
    if (await cancelDeposit(deps.db, row.id)) {
      canceled.push(row.id);
      if (notOurs && invoice.ok) {
        deps.log?.warn(
          {
            deposit: row.id,
            invoice: invoice.value.id,
            amount: invoice.value.amount,
            currency: invoice.value.currency,
          },
          "fiat deposit expired: its reference's invoice at the gateway is of another amount or currency",
        );
      } else deps.log?.info({ deposit: row.id }, 'fiat deposit expired without an invoice');
    }
  }
  return canceled;
}

/** Runs `expireStaleFiatDeposits` every `everyMs` for the app's lifetime. */
export function depositExpiryLoop(
  deps: ExpiryDeps,
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
