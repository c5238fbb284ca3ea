import type { FleetEvents } from '../fleet/events.js';
import type { MutationQueue } from './mutation-queue.js';
import type { OutcomeLog, QueueOutcome } from './outcomes.js';

/** What a client learns about a queued mutation (`GET /queue/events`). */
export interface QueueEvent {
  readonly event: 'queued' | 'sent' | 'rejected' | 'retry' | 'retried' | 'discarded';
  readonly id: string;
  /** The instance that made the change (fleet mode). */
  readonly instance?: string | undefined;
  readonly upstreamStatus?: number | undefined;
  readonly message?: string | undefined;
}

/** Fans queue events out to the clients listening on this instance. */
export class QueueEventHub {
  private readonly listeners = new Set<(event: QueueEvent) => void>();
  private readonly closers = new Set<() => void>();

  get listening(): number {
    return this.listeners.size;
  }

  emit(event: QueueEvent): void {
    for (const listener of this.listeners) listener(event);
  }

  /** `onClose` ends the listener's stream when the instance shuts down. */
  subscribe(listener: (event: QueueEvent) => void, onClose: () => void = () => undefined): () => void {
    this.listeners.add(listener);
    this.closers.add(onClose);
    return () => {
      this.listeners.delete(listener);
      this.closers.delete(onClose);
    };
  }

  /** Ends every stream (shutdown: an open event stream would keep the server from closing). */
  close(): void {
    for (const close of [...this.closers]) close();
  }

  /** Fleet mode: every instance's queue changes, from the fleet channel (published by the scripts). */
  followFleet(events: FleetEvents): void {
    events.on((message) => {
      if (message.kind !== 'queue') return;
      this.emit({
        event: message.event,
        id: message.id,
        instance: message.from,
        ...(message.upstreamStatus !== undefined ? { upstreamStatus: message.upstreamStatus } : {}),
        ...(message.message !== undefined ? { message: message.message } : {}),
      });
    });
  }

  /**
   * File mode: appends from the queue, final outcomes from the outcome log (wrapped), and a head that
   * became rejected (seen on the queue's next change).
   */
  followLocal(queue: MutationQueue, outcomes: OutcomeLog): OutcomeLog {
    let announcedRejection: string | undefined;
    queue.onChange((change) => {
      if (change.kind === 'append') {
        this.emit({ event: 'queued', id: change.item.id });
        return;
      }
      const blocked = queue.blockedBy();
      if (blocked && blocked.id !== announcedRejection) {
        announcedRejection = blocked.id;
        this.emit({ event: 'rejected', id: blocked.id, message: blocked.lastError?.message });
      } else if (!blocked) announcedRejection = undefined;
    });
    return {
      get: (id) => outcomes.get(id),
      record: async (outcome: QueueOutcome) => {
        await outcomes.record(outcome);
        this.emit({
          event: outcome.status,
          id: outcome.id,
          ...(outcome.upstreamStatus !== undefined ? { upstreamStatus: outcome.upstreamStatus } : {}),
        });
      },
    };
  }
}
