import type { MutationQueue } from './mutation-queue.js';
import type { OutcomeLog, QueueOutcome } from './outcomes.js';
import type { QueuedMutation, QueuedPayload } from './store.js';

/** What became of an attempt to queue a mutation. */
export type AppendResult =
  | { readonly kind: 'queued'; readonly item: QueuedMutation }
  /** The head of the queue was rejected upstream: nothing is queued behind it (QUEUE_BLOCKED). */
  | { readonly kind: 'blocked'; readonly by: QueuedMutation; readonly size: number }
  /** QUEUE_MAX_ITEMS reached (QUEUE_FULL). */
  | { readonly kind: 'full'; readonly size: number };

export type RetryResult = 'retried' | 'not-found' | 'not-rejected';

/**
 * What `/health` and the queue gauges show. Only the head can be rejected (the replay stops at a
 * rejected head, and nothing is queued behind it), so the head tells whether the queue is blocked.
 */
export interface QueueSummary {
  readonly size: number;
  readonly head: QueuedMutation | undefined;
}

/**
 * The mutation queue as the request path and the routes use it, asynchronous so that it can live in
 * Redis (QUEUE_STORE=redis, one queue for a fleet) as well as in this process (QUEUE_STORE=file).
 * `append` decides QUEUE_BLOCKED and QUEUE_FULL atomically with the append.
 */
export interface QueueAccess {
  size(): Promise<number>;
  /** The length and the head (the oldest mutation), read at once without walking the queue. */
  summary(): Promise<QueueSummary>;
  blockedBy(): Promise<QueuedMutation | undefined>;
  append(
    payload: QueuedPayload,
    idempotencyKey: string,
    authorization: string | undefined,
    now: number,
    maxItems: number,
    /** It was sent once without an answer: the replay asks the upstream about its key first. */
    maybeSent?: boolean,
  ): Promise<AppendResult>;
  /** The queue in replay order. */
  list(): Promise<readonly QueuedMutation[]>;
  /** A queued mutation and its 0-based position. */
  find(id: string): Promise<{ item: QueuedMutation; position: number } | undefined>;
  /** The final outcome of a mutation that left the queue. */
  outcome(id: string): Promise<QueueOutcome | undefined>;
  /** Puts a rejected mutation back to pending. */
  retry(id: string, now: number): Promise<RetryResult>;
  /** Removes a queued mutation and records it as discarded; undefined when unknown. */
  discard(id: string, now: number): Promise<QueuedMutation | undefined>;
}

/** Outcome of a discarded mutation (the errors it had been rejected with, when it had been). */
export function discardedOutcome(item: QueuedMutation, now: number): QueueOutcome {
  return {
    id: item.id,
    status: 'discarded',
    at: new Date(now).toISOString(),
    createdAt: item.createdAt,
    attempts: item.attempts,
    ...(item.lastError?.errors ? { errors: item.lastError.errors } : {}),
  };
}

/** The queue of one instance: the in-process `MutationQueue` on files, and its outcome log. */
export class LocalQueueAccess implements QueueAccess {
  constructor(
    private readonly queue: MutationQueue,
    private readonly outcomes: OutcomeLog,
  ) {}

  async size(): Promise<number> {
    return this.queue.size;
  }

  async summary(): Promise<QueueSummary> {
    return { size: this.queue.size, head: this.queue.head() };
  }

  async blockedBy(): Promise<QueuedMutation | undefined> {
    return this.queue.blockedBy();
  }

  async append(
    payload: QueuedPayload,
    idempotencyKey: string,
    authorization: string | undefined,
    now: number,
    maxItems: number,
    maybeSent = false,
  ): Promise<AppendResult> {
    const blocked = this.queue.blockedBy();
    if (blocked) return { kind: 'blocked', by: blocked, size: this.queue.size };
    if (this.queue.size >= maxItems) return { kind: 'full', size: this.queue.size };
    return {
      kind: 'queued',
      item: await this.queue.append(payload, idempotencyKey, authorization, now, maybeSent),
    };
  }

  async list(): Promise<readonly QueuedMutation[]> {
    return this.queue.list();
  }

  async find(id: string): Promise<{ item: QueuedMutation; position: number } | undefined> {
    const item = this.queue.find(id);
    return item ? { item, position: this.queue.position(item) } : undefined;
  }

  async outcome(id: string): Promise<QueueOutcome | undefined> {
    return this.outcomes.get(id);
  }

  async retry(id: string, now: number): Promise<RetryResult> {
    const item = this.queue.find(id);
    if (!item) return 'not-found';
    if (item.status !== 'rejected') return 'not-rejected';
    await this.queue.retry(item, now);
    return 'retried';
  }

  async discard(id: string, now: number): Promise<QueuedMutation | undefined> {
    const item = this.queue.find(id);
    if (!item) return undefined;
    await this.queue.remove(item);
    await this.outcomes.record(discardedOutcome(item, now));
    return item;
  }
}
