import { randomUUID } from 'node:crypto';
import type { QueuedMutation, QueuedPayload, QueueError, QueueStore } from './store.js';

/**
 * The FIFO of queued mutations, in memory and in a `QueueStore`. Every change is written before the
 * promise resolves, so an acknowledged "queued" answer survives a restart.
 */
export class MutationQueue {
  private items: QueuedMutation[] = [];
  private nextSeq = 1;
  private readonly listeners: Array<() => void> = [];

  private constructor(private readonly store: QueueStore) {}

  static async open(store: QueueStore): Promise<MutationQueue> {
    const queue = new MutationQueue(store);
    queue.items = await store.load();
    queue.nextSeq = (queue.items[queue.items.length - 1]?.seq ?? 0) + 1;
    return queue;
  }

  /** Called after every change (used to refresh the optimistic local data). */
  onChange(listener: () => void): void {
    this.listeners.push(listener);
  }

  private changed(): void {
    for (const listener of this.listeners) listener();
  }

  get size(): number {
    return this.items.length;
  }

  list(): readonly QueuedMutation[] {
    return this.items;
  }

  head(): QueuedMutation | undefined {
    return this.items[0];
  }

  /** The head of the queue when the upstream rejected it: nothing behind it is sent until it is retried or discarded. */
  blockedBy(): QueuedMutation | undefined {
    const head = this.items[0];
    return head?.status === 'rejected' ? head : undefined;
  }

  find(id: string): QueuedMutation | undefined {
    return this.items.find((item) => item.id === id);
  }

  async append(
    payload: QueuedPayload,
    idempotencyKey: string,
    authorization: string | undefined,
    now: number,
  ): Promise<QueuedMutation> {
    const item: QueuedMutation = {
      id: randomUUID(),
      seq: this.nextSeq,
      createdAt: new Date(now).toISOString(),
      payload,
      idempotencyKey,
      ...(authorization ? { authorization } : {}),
      status: 'pending',
      attempts: 0,
      nextAttemptAt: now,
    };
    this.nextSeq += 1;
    await this.store.save(item);
    this.items.push(item);
    this.changed();
    return item;
  }

  async remove(item: QueuedMutation): Promise<void> {
    await this.store.remove(item);
    this.items = this.items.filter((other) => other.id !== item.id);
    this.changed();
  }

  async markRetry(item: QueuedMutation, error: QueueError, nextAttemptAt: number): Promise<void> {
    item.attempts += 1;
    item.lastError = error;
    item.nextAttemptAt = nextAttemptAt;
    await this.store.save(item);
  }

  async markRejected(item: QueuedMutation, error: QueueError): Promise<void> {
    item.attempts += 1;
    item.status = 'rejected';
    item.lastError = error;
    await this.store.save(item);
    this.changed();
  }

  /** Puts a rejected mutation back to pending, to be replayed at once. */
  async retry(item: QueuedMutation, now: number): Promise<void> {
    item.status = 'pending';
    item.nextAttemptAt = now;
    await this.store.save(item);
    this.changed();
  }
}
