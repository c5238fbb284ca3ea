import type { Database } from '@platform/sql-storage/database';
import type { FastifyBaseLogger } from 'fastify';
import type { Catalog } from '../catalog/catalog.js';
import { callbackBackoffMs } from '../domain/backoff.js';
import { signBody } from '../domain/signature.js';
import type { SecretBook } from '../secrets/book.js';
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
  /** Callbacks claimed per pass at most. @default 20 */
  readonly batchSize?: number;
  /** Attempts before a callback is dead-lettered (the operator retries it). @default 25 */
  readonly maxAttempts?: number;
  /** Callbacks in flight at once per process, across all objects. @default 64 */
  readonly concurrency?: number;
  /** Rotated merchant secrets; callbacks are signed with the current one. @default the configured secret */
  readonly secrets?: SecretBook;
}

/** Sends one callback, signed over the exact bytes sent with the time of this attempt. */
async function send(options: DeliveryOptions, callback: PendingCallback): Promise<string | undefined> {
  const merchant = options.catalog.merchants.get(callback.merchantId);
  if (!merchant) return `merchant ${callback.merchantId} is no longer configured`;
  const timestamp = Math.floor(options.now() / 1000);
  const secret = options.secrets ? await options.secrets.signing(merchant) : merchant.secret;
  try {
    const response = await fetch(merchant.callbackUrl, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-paygate-merchant': merchant.id,
        'x-paygate-timestamp': String(timestamp),
        'x-paygate-signature': signBody(secret, timestamp, callback.body),
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
 * Delivers callbacks without letting one slow or failing receiver hold up the others: each pass
 * claims due callbacks up to the free capacity and starts them, and the next pass does not wait for
 * the ones still in flight (their lease keeps them from being claimed again). Per object the order
 * holds, as only an object's oldest undelivered event is ever claimed.
 */
export class CallbackDispatcher {
  readonly #inFlight = new Set<Promise<void>>();

  constructor(private readonly options: DeliveryOptions) {}

  get inFlight(): number {
    return this.#inFlight.size;
  }

  /** Claims and starts due callbacks; resolves to the deliveries started (each settles when recorded). */
  async dispatch(): Promise<Promise<void>[]> {
    const free = (this.options.concurrency ?? 64) - this.#inFlight.size;
    if (free <= 0) return [];
    const now = new Date(this.options.now());
    const claimed = await this.options.db.transaction((tx) =>
      claimDueCallbacks(
        tx,
        now,
        this.options.timeoutMs + 5_000,
        Math.min(free, this.options.batchSize ?? 20),
      ),
    );
    return claimed.map((callback) => {
      const delivery = this.#deliver(callback).catch((error: unknown) =>
        this.options.log.error({ err: error, event: callback.eventId }, 'callback bookkeeping failed'),
      );
      this.#inFlight.add(delivery);
      void delivery.finally(() => this.#inFlight.delete(delivery));
      return delivery;
    });
  }

  /** Waits for every delivery in flight. */
  async drain(): Promise<void> {
    await Promise.all([...this.#inFlight]);
  }

  async #deliver(callback: PendingCallback): Promise<void> {
    const { options } = this;
    const failure = await send(options, callback);
    if (failure === undefined) {
      await markDelivered(options.db, callback.id, new Date(options.now()));
      options.log.info({ event: callback.eventId }, 'callback delivered');
      return;
    }
    const attempt = callback.attempts + 1;
    const dead = attempt >= (options.maxAttempts ?? 25);
    const delay = callbackBackoffMs(attempt, options.retryBaseMs, options.retryMaxMs);
    await markFailed(options.db, callback.id, new Date(options.now() + delay), failure, dead);
    if (dead) {
      options.log.error(
        { event: callback.eventId, outbox: callback.id, attempt, reason: failure },
        'callback dead-lettered: retry it with `callbacks retry <id>`',
      );
      return;
    }
    options.log.warn(
      { event: callback.eventId, attempt, reason: failure, retryInMs: delay },
      'callback not acknowledged',
    );
  }
}

/** One pass that waits for what it started; returns the number of callbacks it sent. */
export async function deliverDueCallbacks(options: DeliveryOptions): Promise<number> {
  const started = await new CallbackDispatcher(options).dispatch();
  await Promise.all(started);
  return started.length;
}
