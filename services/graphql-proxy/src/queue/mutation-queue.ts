import { randomUUID } from 'node:crypto';
import type { QueuedMutation, QueuedPayload, QueueError, QueueStore } from './store.js';

/** What changed in the queue: an append (the common case, applied incrementally) or anything else. */
export type QueueChange =
  | { readonly kind: 'append'; readonly item: QueuedMutation }
  | { readonly kind: 'other' };

/**
 * The FIFO of queued mutations, in memory and in a `QueueStore`. Every change is written before the
 * promise resolves, so an acknowledged "queued" answer survives a restart. Append, remove, find and
 * head are O(1) in the queue's length (a Map in insertion order); `list()` copies and is for views.
 */
export class MutationQueue {
  private readonly items = new Map<string, QueuedMutation>();
  private nextSeq = 1;
  private readonly listeners: Array<(change: QueueChange) => void> = [];

  private constructor(private readonly store: QueueStore) {}

  static async open(store: QueueStore): Promise<MutationQueue> {
    const queue = new MutationQueue(store);
    const loaded = await store.load();
    for (const item of loaded) queue.items.set(item.id, item);
    queue.nextSeq = (loaded[loaded.length - 1]?.seq ?? 0) + 1;
    return queue;
  }

  /** Called after every change (used to refresh the optimistic local data). */
  onChange(listener: (change: QueueChange) => void): void {
    this.listeners.push(listener);
  }

  private changed(change: QueueChange): void {
    for (const listener of this.listeners) listener(change);
  }

  get size(): number {
    return this.items.size;
  }

  /** The queue in replay order (a copy: O(n), for views and recomputations, not for the hot path). */
  list(): readonly QueuedMutation[] {
    return [...this.items.values()];
  }

  head(): QueuedMutation | undefined {
    for (const item of this.items.values()) return item;
    return undefined;
  }

  /** The head of the queue when the upstream rejected it: nothing behind it is sent until it is retried or discarded. */
  blockedBy(): QueuedMutation | undefined {
    const head = this.head();
    return head?.status === 'rejected' ? head : undefined;
  }

  find(id: string): QueuedMutation | undefined {
    return this.items.get(id);
  }

  /** 0-based position in replay order (O(n); for `GET /queue/{id}`). */
  position(item: QueuedMutation): number {
    let index = 0;
    for (const other of this.items.values()) {
      if (other === item) return index;
      index += 1;
    }
    return -1;
  }

  async append(
    payload: QueuedPayload,
    idempotencyKey: string,
    authorization: string | undefined,
    now: number,
    maybeSent = false,
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
      ...(maybeSent ? { maybeSent } : {}),
    };
    this.nextSeq += 1;
    await this.store.save(item);
    this.items.set(item.id, item);
    this.changed({ kind: 'append', item });
    return item;
  }

  async remove(item: QueuedMutation): Promise<void> {
    await this.store.remove(item);
    this.items.delete(item.id);
    this.changed({ kind: 'other' });
  }

  async markRetry(item: QueuedMutation, error: QueueError, nextAttemptAt: number): Promise<void> {
    await this.update(item, { ...item, attempts: item.attempts + 1, lastError: error, nextAttemptAt });
  }

  async markRejected(item: QueuedMutation, error: QueueError): Promise<void> {
    await this.update(item, { ...item, attempts: item.attempts + 1, status: 'rejected', lastError: error });
  }

  /** Recorded before its first send: a restart finds it in doubt (it may have reached the upstream). */
  async markMaybeSent(item: QueuedMutation): Promise<void> {
    item.maybeSent = true;
    await this.store.save(item);
  }

  /** Takes the replay's next state of a mutation (attempts, status, error, backoff). */
  async update(item: QueuedMutation, next: QueuedMutation): Promise<void> {
    if (next.id !== item.id || next.seq !== item.seq) throw new Error('update of another mutation');
    const rejected = next.status === 'rejected' && item.status !== 'rejected';
    item.attempts = next.attempts;
    item.status = next.status;
    item.lastError = next.lastError;
    item.nextAttemptAt = next.nextAttemptAt;
    item.maybeSent = next.maybeSent;
    await this.store.save(item);
    if (rejected) this.changed({ kind: 'other' });
  }

  /** Puts a rejected mutation back to pending, to be replayed at once. */
  async retry(item: QueuedMutation, now: number): Promise<void> {
    item.status = 'pending';
    item.nextAttemptAt = now;
    await this.store.save(item);
    this.changed({ kind: 'other' });
  }
}
