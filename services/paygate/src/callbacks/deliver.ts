import { withTraceContext } from '@platform/observability/trace-context';
import type { Database } from '@platform/sql-storage/database';
import type { FastifyBaseLogger } from 'fastify';
import type { Catalog } from '../catalog/catalog.js';
import { callbackBackoffMs } from '../domain/backoff.js';
import { signBody } from '../domain/signature.js';
import type { FaultCount } from '../sandbox/fault-metrics.js';
import type { CallbackSandbox } from '../sandbox/sandbox.js';
import type { SecretBook } from '../secrets/book.js';
import { type CallbackTransport, UndiciCallbackTransport } from './http-client.js';
import { claimDueCallbacks, markDropped, markFailed, type PendingCallback, releaseClaims } from './outbox.js';

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
  /** Callbacks one claim takes at most. @default twice `concurrency` (every place refilled and as many in hand) */
  readonly batchSize?: number;
  /** Attempts before a callback is dead-lettered (the operator retries it). @default 25 */
  readonly maxAttempts?: number;
  /** Callbacks in flight at once per process, across all objects. @default 64 */
  readonly concurrency?: number;
  /** Rotated merchant secrets; callbacks are signed with the current one. @default the configured secret */
  readonly secrets?: SecretBook;
  /** The fault-injecting sandbox of the test merchants that asked for it (src/sandbox/). @default none */
  readonly sandbox?: CallbackSandbox;
  /** Counts each sandbox fault applied (`paygate_sandbox_callback_faults_total`). @default none */
  readonly countFault?: FaultCount;
  /** How callbacks are sent. @default undici's Agent, `concurrency` kept-alive connections per receiver (http-client.ts) */
  readonly transport?: CallbackTransport;
}

/** Sends one callback, signed over the exact bytes sent with the time of this attempt. */
async function send(
  options: DeliveryOptions,
  transport: CallbackTransport,
  callback: PendingCallback,
  signWithPrevious = false,
): Promise<string | undefined> {
  const merchant = options.catalog.merchants.get(callback.merchantId);
  if (!merchant) return `merchant ${callback.merchantId} is no longer configured`;
  const timestamp = Math.floor(options.now() / 1000);
  const previous =
    signWithPrevious && options.secrets ? await options.secrets.previousInGrace(merchant) : undefined;
  if (previous !== undefined) options.countFault?.(merchant.id, 'rotated');
  const secret = previous ?? (options.secrets ? await options.secrets.signing(merchant) : merchant.secret);
  const answer = await transport.post({
    url: merchant.callbackUrl,
    headers: {
      'content-type': 'application/json',
      'x-paygate-merchant': merchant.id,
      'x-paygate-timestamp': String(timestamp),
      'x-paygate-signature': signBody(secret, timestamp, callback.body),
    },
    body: callback.body,
    timeoutMs: options.timeoutMs,
  });
  if ('error' in answer) return answer.error;
  if (answer.status >= 200 && answer.status < 300) return undefined;
  return `HTTP ${answer.status}`;
}

/**
 * Delivers callbacks without letting one slow or failing receiver hold up the others: each pass
 * claims due callbacks up to the free capacity and starts them, and the next pass does not wait for
 * the ones still in flight (their lease keeps them from being claimed again). Per object the order
 * holds, as only an object's oldest undelivered event is ever claimed.
 *
 * Acknowledgements are not written one by one: a delivered callback joins a list that the next
 * claim statement records (`claimDueCallbacks`), so a busy dispatcher costs one statement per
 * round trip rather than a claim transaction and an UPDATE per callback. A delivery settles once its
 * acknowledgement is committed.
 */
/**
 * How long a claimed callback may wait in hand before its request starts: its lease is the request's
 * timeout plus 5 s, so a request started later than this could outlive the lease.
 */
const HAND_MAX_MS = 2_000;

export class CallbackDispatcher {
  readonly #inFlight = new Set<Promise<boolean>>();
  /** Acknowledged, not yet recorded: the next claim writes them. */
  #acknowledged: { id: number; recorded: (error?: unknown) => void }[] = [];
  #cycleRequested = false;
  #pumping = false;
  /** The pump's current run, awaited by `close` so that nothing it claims is left in hand. */
  #pumpRun: Promise<void> | undefined;
  /** Refills only while the worker runs (`resume`); tests driving single passes get no more than they ask. */
  #halted = true;
  /** Made on first use and again after `close` (a stopped worker may be started again). */
  #transport: CallbackTransport | undefined;
  /** Deliveries whose request (or sandbox drop) is still under way: what `concurrency` bounds. */
  #sending = 0;
  /** Claimed by the pump, not yet started (at most `concurrency`, see `#claimLimit`). */
  #queue: { callback: PendingCallback; claimedAt: number }[] = [];

  constructor(private readonly options: DeliveryOptions) {}

  #client(): CallbackTransport {
    this.#transport ??= this.options.transport ?? new UndiciCallbackTransport(this.options.concurrency ?? 64);
    return this.#transport;
  }

  /**
   * Gives back the claimed callbacks not started, waits for the deliveries in flight, then closes
   * the connections to the receivers. Called once halted.
   */
  async close(): Promise<void> {
    // A claim under way when the worker halted may still add to the hand: wait for it first.
    await this.#pumpRun?.catch(() => undefined);
    const unsent = this.#queue.splice(0).map((queued) => queued.callback.id);
    await releaseClaims(this.options.db, unsent, new Date(this.options.now())).catch((error: unknown) =>
      this.options.log.warn({ err: error }, 'claimed callbacks not given back: sent after their lease'),
    );
    await this.drain();
    const transport = this.#transport;
    this.#transport = undefined;
    if (transport && transport !== this.options.transport) await transport.close();
  }

  /** Deliveries started and not yet settled (sending, or acknowledged and waiting to be recorded). */
  get inFlight(): number {
    return this.#inFlight.size;
  }

  /** Claims and starts due callbacks; resolves to the deliveries started (each settles when recorded). */
  async dispatch(): Promise<Promise<boolean>[]> {
    const claimed = await this.#claim(this.#freePlaces());
    this.#queue.push(...claimed.map((callback) => ({ callback, claimedAt: this.options.now() })));
    return this.#startQueued();
  }

  /**
   * Requests that may start now. Only requests still under way hold a place: an acknowledged
   * callback waiting for the next claim to record it holds none (that claim records it and takes
   * its object's next event in the same statement).
   */
  #freePlaces(): number {
    return Math.max(0, this.#concurrency - this.#sending);
  }

  get #concurrency(): number {
    return this.options.concurrency ?? 64;
  }

  /**
   * What the pump's next claim may take: enough to refill every place and keep as many claimed in
   * hand, so the places are refilled from the hand while the next claim's round trip runs. Claiming
   * only the free places had every request wait for a claim to be refilled, and the dispatcher went
   * at one claim round trip (20-30 ms on the loaded bench machine) per 16 callbacks however fast
   * the receiver answered (README, "Bench").
   */
  #claimLimit(): number {
    if (this.#halted) return 0;
    const room = 2 * this.#concurrency - this.#sending - this.#queue.length;
    return Math.max(0, Math.min(room, this.options.batchSize ?? 2 * this.#concurrency));
  }

  /**
   * Starts claimed callbacks while places are free. One claimed too long ago is left alone: its lease
   * (timeout + 5 s) no longer covers a whole request, and another instance may take it once the
   * lease ends; it is not lost, only sent later.
   */
  #startQueued(): Promise<boolean>[] {
    const started: Promise<boolean>[] = [];
    while (this.#sending < this.#concurrency) {
      const next = this.#queue.shift();
      if (!next) break;
      if (this.options.now() - next.claimedAt > HAND_MAX_MS) {
        this.options.log.debug(
          { event: next.callback.eventId },
          'claimed callback waited too long: left to its lease',
        );
        continue;
      }
      started.push(this.#launch(next.callback));
    }
    return started;
  }

  #launch(callback: PendingCallback): Promise<boolean> {
    this.#sending += 1;
    let sent = false;
    const release = () => {
      if (sent) return;
      sent = true;
      this.#sending -= 1;
      // A place is free: start the next claimed one now, and refill the hand soon.
      if (!this.#halted) this.#startQueued();
      this.#requestCycle();
    };
    const delivery = this.#deliver(callback, release).catch((error: unknown) => {
      this.options.log.error({ err: error, event: callback.eventId }, 'callback bookkeeping failed');
      return false;
    });
    this.#inFlight.add(delivery);
    void delivery.finally(() => {
      release();
      this.#inFlight.delete(delivery);
    });
    return delivery;
  }

  /** One statement: records the acknowledgements so far and claims up to `limit` (0: records only). */
  async #claim(limit: number): Promise<PendingCallback[]> {
    const acknowledged = this.#acknowledged.splice(0);
    if (limit === 0 && acknowledged.length === 0) return [];
    try {
      const claimed = await claimDueCallbacks(
        this.options.db,
        new Date(this.options.now()),
        this.options.sandbox?.leaseMs(this.options.timeoutMs) ?? this.options.timeoutMs + 5_000,
        limit,
        acknowledged.map((a) => a.id),
      );
      for (const a of acknowledged) a.recorded();
      return claimed;
    } catch (error) {
      for (const a of acknowledged) a.recorded(error);
      throw error;
    }
  }

  /**
   * Keeps the pipe full between passes: claims again while claims come back full and capacity is
   * free, and again whenever deliveries end, so the throughput is not one batch per pass. Never runs
   * twice at once.
   */
  async pump(): Promise<void> {
    if (this.#pumping) return;
    this.#pumping = true;
    this.#pumpRun = this.#pumpLoop();
    return this.#pumpRun;
  }

  async #pumpLoop(): Promise<void> {
    try {
      for (;;) {
        const want = this.#claimLimit();
        if (want === 0 && this.#acknowledged.length === 0) return;
        const claimed = await this.#claim(want);
        const claimedAt = this.options.now();
        this.#queue.push(...claimed.map((callback) => ({ callback, claimedAt })));
        if (!this.#halted) this.#startQueued();
        const full = want > 0 && claimed.length >= want;
        if (!full && this.#acknowledged.length === 0) return;
      }
    } finally {
      this.#pumping = false;
      if (this.#acknowledged.length > 0) this.#requestCycle();
    }
  }

  /** Stops refilling (the worker is stopping); acknowledgements are still recorded. */
  halt(): void {
    this.#halted = true;
  }

  resume(): void {
    this.#halted = false;
  }

  /** A delivery ended: soon (after the deliveries ending in the same turn) record and refill. */
  #requestCycle(): void {
    if (this.#cycleRequested) return;
    this.#cycleRequested = true;
    setImmediate(() => {
      this.#cycleRequested = false;
      if (this.#pumping) return; // the running pump takes the acknowledgements in its next turn
      void this.pump().catch((error: unknown) =>
        this.options.log.error({ err: error }, 'callback pump failed'),
      );
    });
  }

  /** Resolves once the acknowledgement of `id` is committed. */
  #recordDelivered(id: number): Promise<void> {
    return new Promise((resolve, reject) => {
      this.#acknowledged.push({ id, recorded: (error) => (error === undefined ? resolve() : reject(error)) });
      this.#requestCycle();
    });
  }

  /** Waits for every delivery in flight. */
  async drain(): Promise<void> {
    await Promise.all([...this.#inFlight]);
  }

  /** Sends and records one callback (calling `sent` once the request is over); true when the merchant acknowledged it. */
  async #deliver(callback: PendingCallback, sent: () => void): Promise<boolean> {
    const { options } = this;
    const plan = options.sandbox?.planFor(callback);
    if (plan?.dropForMs !== undefined) {
      options.countFault?.(callback.merchantId, 'drop');
      await markDropped(options.db, callback.id, new Date(options.now() + plan.dropForMs));
      options.log.debug({ event: callback.eventId, inMs: plan.dropForMs }, 'sandbox fault: callback dropped');
      return false;
    }
    if (plan && plan.delayMs > 0) {
      options.countFault?.(callback.merchantId, 'delay');
      await new Promise((resolve) => setTimeout(resolve, plan.delayMs));
    }
    if (plan?.reorder) {
      options.countFault?.(callback.merchantId, 'reorder');
      await options.sandbox?.hold(callback, plan.holdMaxMs);
    }
    // The send joins the trace of the request that wrote the callback (the payer's submit).
    const sendOnce = () =>
      withTraceContext(callback.traceContext, () =>
        send(options, this.#client(), callback, plan?.signWithPrevious),
      );
    // A sandbox duplicate goes out alongside the callback or right after its acknowledgement, never
    // after the object's next event (that one waits until this one is recorded as delivered).
    const duplicate = () => {
      options.countFault?.(callback.merchantId, 'duplicate');
      return sendOnce();
    };
    const failure =
      plan?.duplicate === 'alongside' ? (await Promise.all([sendOnce(), duplicate()]))[0] : await sendOnce();
    if (failure === undefined && plan?.duplicate === 'after') await duplicate();
    sent();
    if (failure === undefined) {
      options.sandbox?.acknowledged(callback);
      await this.#recordDelivered(callback.id);
      options.log.info({ event: callback.eventId }, 'callback delivered');
      return true;
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
      return false;
    }
    options.log.warn(
      { event: callback.eventId, attempt, reason: failure, retryInMs: delay },
      'callback not acknowledged',
    );
    return false;
  }
}

/** One pass that waits for what it started; returns the number of callbacks it sent. */
export async function deliverDueCallbacks(options: DeliveryOptions): Promise<number> {
  const dispatcher = new CallbackDispatcher(options);
  try {
    const started = await dispatcher.dispatch();
    await Promise.all(started);
    return started.length;
  } finally {
    await dispatcher.close();
  }
}
