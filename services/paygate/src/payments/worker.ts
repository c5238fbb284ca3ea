import type { FastifyBaseLogger } from 'fastify';
import { CallbackDispatcher, type DeliveryOptions } from '../callbacks/deliver.js';
import { assignPositions } from '../events/store.js';
import { purgeExpiredKeys } from '../idempotency/store.js';
import { settleDueRefunds } from '../refunds/refunds.js';
import type { PaymentDeps } from './deps.js';
import { expireDueInvoices } from './invoices.js';
import { settleDuePayouts } from './payouts.js';

/**
 * The gateway's background loop: expires unpaid invoices, settles due payouts and refunds, numbers
 * new events and starts due callbacks, every `intervalMs`. Everything it works on is in the
 * database, so a restart resumes where the last process stopped.
 */
export class Worker {
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<void> | undefined;
  #stopped = true;
  #purgedAt = 0;
  readonly #dispatcher: CallbackDispatcher;

  constructor(
    private readonly deps: PaymentDeps,
    delivery: DeliveryOptions,
    private readonly intervalMs: number,
    private readonly log: FastifyBaseLogger,
  ) {
    this.#dispatcher = new CallbackDispatcher(delivery);
  }

  /**
   * One pass of every duty (tests call it directly). `waitForCallbacks: false` (the loop) returns
   * while callbacks are still in flight, so a slow receiver never holds up the next pass.
   */
  async runOnce(options: { waitForCallbacks?: boolean } = {}): Promise<void> {
    await expireDueInvoices(this.deps);
    await settleDuePayouts(this.deps);
    await settleDueRefunds(this.deps);
    await assignPositions(this.deps.db);
    if (options.waitForCallbacks ?? true) await Promise.all(await this.#dispatcher.dispatch());
    else await this.#dispatcher.pump();
    // Answers are kept 24 h, counts of unsigned creates a window: sweeping once a minute is plenty.
    if (this.deps.now() - this.#purgedAt >= 60_000) {
      this.#purgedAt = this.deps.now();
      await purgeExpiredKeys(this.deps.db, new Date(this.#purgedAt));
      await this.deps.unsignedInvoices.purge();
    }
  }

  /** Starts the loop with a pass at once: callbacks left by the last process go out without waiting an interval. */
  start(): void {
    if (!this.#stopped) return;
    this.#stopped = false;
    this.#dispatcher.resume();
    this.#schedule(0);
  }

  #schedule(delayMs = this.intervalMs): void {
    if (this.#stopped) return;
    this.#timer = setTimeout(() => {
      this.#running = this.runOnce({ waitForCallbacks: false })
        .catch((error: unknown) => this.log.error({ err: error }, 'background pass failed'))
        .finally(() => {
          this.#running = undefined;
          this.#schedule();
        });
    }, delayMs);
  }

  /** Stops the loop and waits for a pass and the callbacks in flight to finish. */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#dispatcher.halt();
    clearTimeout(this.#timer);
    await this.#running;
    await this.#dispatcher.close();
  }
}
