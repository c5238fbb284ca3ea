import type { FastifyBaseLogger } from 'fastify';
import { type DeliveryOptions, deliverDueCallbacks } from '../callbacks/deliver.js';
import { purgeExpiredKeys } from '../idempotency/store.js';
import { settleDueRefunds } from '../refunds/refunds.js';
import type { PaymentDeps } from './deps.js';
import { expireDueInvoices } from './invoices.js';
import { settleDuePayouts } from './payouts.js';

/**
 * The gateway's background loop: expires unpaid invoices, settles due payouts and delivers due
 * callbacks, every `intervalMs`. Everything it works on is in the database, so a restart resumes
 * where the last process stopped.
 */
export class Worker {
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<void> | undefined;
  #stopped = true;

  constructor(
    private readonly deps: PaymentDeps,
    private readonly delivery: DeliveryOptions,
    private readonly intervalMs: number,
    private readonly log: FastifyBaseLogger,
  ) {}

  /** One pass of every duty (tests call it directly). */
  async runOnce(): Promise<void> {
    await expireDueInvoices(this.deps);
    await settleDuePayouts(this.deps);
    await settleDueRefunds(this.deps);
    await deliverDueCallbacks(this.delivery);
    await purgeExpiredKeys(this.deps.db, new Date(this.deps.now()));
  }

  start(): void {
    if (!this.#stopped) return;
    this.#stopped = false;
    this.#schedule();
  }

  #schedule(): void {
    if (this.#stopped) return;
    this.#timer = setTimeout(() => {
      this.#running = this.runOnce()
        .catch((error: unknown) => this.log.error({ err: error }, 'background pass failed'))
        .finally(() => {
          this.#running = undefined;
          this.#schedule();
        });
    }, this.intervalMs);
  }

  /** Stops the loop and waits for a pass in progress to finish. */
  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    await this.#running;
  }
}
