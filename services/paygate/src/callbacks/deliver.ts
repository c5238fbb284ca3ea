import { withTraceContext } from '@platform/observability/trace-context';
import type { Database } from '@platform/sql-storage/database';
import type { FastifyBaseLogger } from 'fastify';
import type { Catalog } from '../catalog/catalog.js';
import { callbackBackoffMs } from '../domain/backoff.js';
import { signBody } from '../domain/signature.js';
import { claimDueCallbacks, markDelivered, markFailed, type PendingCallback } from './outbox.js';

export interface DeliveryOptions {
  readonly db: Database;
  readonly catalog: Catalog;
  readonly now: () => number;
  readonly log: FastifyBaseLogger;
  /** @default 1000 */
  readonly retryBaseMs: number;
  /** @default 300000 */
  readonly retryMaxMs: number;
  /** @default 10000 */
  readonly timeoutMs: number;
  /** Callbacks sent per pass. @default 20 */
  readonly batchSize?: number;
}

/** Sends one callback, signed over the exact bytes sent with the time of this attempt. */
async function send(options: DeliveryOptions, callback: PendingCallback): Promise<string | undefined> {
  const merchant = options.catalog.merchants.get(callback.merchantId);
  if (!merchant) return `merchant ${callback.merchantId} is no longer configured`;
  const timestamp = Math.floor(options.now() / 1000);
  try {
    const response = await fetch(merchant.callbackUrl, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-paygate-merchant': merchant.id,
        'x-paygate-timestamp': String(timestamp),
        'x-paygate-signature': signBody(merchant.secret, timestamp, callback.body),
      },
      body: callback.body,
      redirect: 'manual',
      signal: AbortSignal.timeout(options.timeoutMs),
    });
    await response.arrayBuffer().catch(() => undefined);
    if (response.status >= 200 && response.status < 300) return undefined;
    return `HTTP ${response.status}`;
  } catch (error) {
    const cause = (error as { cause?: { code?: string } }).cause?.code;
    return cause ?? (error as Error).name;
  }
}

/**
 * One pass over the due callbacks: claims them, sends each, and records delivery or the next
 * attempt (1 s doubling up to the cap). Returns the number delivered.
 */
export async function deliverDueCallbacks(options: DeliveryOptions): Promise<number> {
  const now = new Date(options.now());
  const claimed = await options.db.transaction((tx) =>
    claimDueCallbacks(tx, now, options.timeoutMs + 5_000, options.batchSize ?? 20),
  );
  let delivered = 0;
  await Promise.all(
    claimed.map(async (callback) => {
      // The send joins the trace of the request that wrote the callback (the payer's submit).
      const failure = await withTraceContext(callback.traceContext, () => send(options, callback));
      if (failure === undefined) {
        await markDelivered(options.db, callback.id, new Date(options.now()));
        delivered += 1;
        options.log.info({ event: callback.eventId }, 'callback delivered');
        return;
      }
      const delay = callbackBackoffMs(callback.attempts + 1, options.retryBaseMs, options.retryMaxMs);
      await markFailed(options.db, callback.id, new Date(options.now() + delay), failure);
      options.log.warn(
        { event: callback.eventId, attempt: callback.attempts + 1, reason: failure, retryInMs: delay },
        'callback not acknowledged',
      );
    }),
  );
  return delivered;
}
