import type { Logger } from 'pino';
import { backoffMs } from '../cache/policy.js';
import type { MutationQueue } from '../queue/mutation-queue.js';
import type { OutcomeLog } from '../queue/outcomes.js';
import type { QueuedMutation } from '../queue/store.js';
import { hasErrors, type UpstreamClient, type UpstreamMonitor } from '../upstream/client.js';

export interface ReplayResult {
  flushed: number;
  remaining: number;
  /** Why the replay stopped before emptying the queue. */
  /** `leased`: another instance of the fleet holds the replay lease (QUEUE_STORE=redis). */
  stoppedBy?: {
    id: string;
    reason: 'rejected' | 'unavailable' | 'backoff' | 'leased';
    message?: string | undefined;
  };
}

export interface ReplayerDeps {
  readonly queue: MutationQueue;
  readonly outcomes: OutcomeLog;
  readonly upstream: UpstreamClient;
  readonly monitor: UpstreamMonitor;
  readonly authToken: string | undefined;
  readonly clock: () => number;
  readonly retryBaseMs: number;
  readonly retryMaxMs: number;
  readonly probeIntervalMs: number;
  readonly logger: Logger;
  /** Called for each confirmed mutation with its answer (cache invalidation), before it leaves the queue. */
  readonly onConfirmed: (item: QueuedMutation, data: unknown) => void;
  /** Called after a replay that confirmed at least one mutation (local sync). */
  readonly afterReplay: () => void;
}

const PROBE_BODY = JSON.stringify({ query: 'query ProxyProbe { __typename }', operationName: 'ProxyProbe' });

/**
 * Replays the queue in order, one mutation at a time, with its idempotency key. Stops at the first
 * mutation the upstream cannot take (retried later with backoff) or rejects (kept, with its error,
 * until retried or discarded through the management API). A periodic tick probes the upstream while
 * it is offline or the queue is not empty. Coming back online replays at once a head that is due (one
 * queued during the outage), but honours the backoff of a head whose own replay failed: the probe that
 * brings the upstream back would otherwise retry it every PROBE_INTERVAL_MS, however often it failed.
 * Only an operator's flush (and the replay at start) ignores the backoff.
 */
export class Replayer {
  private running: Promise<ReplayResult> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private probing = false;

  constructor(private readonly deps: ReplayerDeps) {
    deps.monitor.onOnline(() => {
      if (deps.queue.size > 0) void this.replay(false);
    });
  }

  start(): void {
    this.timer = setInterval(() => void this.tick(), this.deps.probeIntervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
  }

  /** Waits for a running replay to finish. */
  async idle(): Promise<void> {
    await this.running;
  }

  private async tick(): Promise<void> {
    if (this.running || this.probing) return;
    const head = this.deps.queue.head();
    // While the breaker is open only the probe goes upstream; its success closes the breaker and
    // (through onOnline) starts the replay.
    if (head?.status === 'pending' && head.nextAttemptAt <= this.deps.clock() && this.deps.monitor.allows()) {
      await this.replay(false);
      return;
    }
    if (this.deps.monitor.state !== 'online' || head !== undefined || !this.deps.monitor.allows()) {
      this.probing = true;
      try {
        const outcome = await this.deps.upstream.post({ body: PROBE_BODY });
        this.deps.monitor.record(outcome);
      } finally {
        this.probing = false;
      }
    }
  }

  /** Replays now; `force` ignores the backoff of the head of the queue. Concurrent calls share a run. */
  replay(force: boolean): Promise<ReplayResult> {
    this.running ??= this.run(force)
      .catch((error: unknown): ReplayResult => {
        // A disk error while updating the queue: logged, retried on the next tick, never a crash.
        this.deps.logger.error({ err: error }, 'replay failed');
        return { flushed: 0, remaining: this.deps.queue.size };
      })
      .finally(() => {
        this.running = undefined;
      });
    return this.running;
  }

  private async run(force: boolean): Promise<ReplayResult> {
    const { queue, upstream, monitor, clock, logger } = this.deps;
    let flushed = 0;
    let stoppedBy: ReplayResult['stoppedBy'];
    try {
      for (let item = queue.head(); item !== undefined; item = queue.head()) {
        if (item.status === 'rejected') {
          stoppedBy = { id: item.id, reason: 'rejected', message: item.lastError?.message };
          break;
        }
        if (!force && item.nextAttemptAt > clock()) {
          stoppedBy = { id: item.id, reason: 'backoff' };
          break;
        }
        if (!force && !monitor.allows()) {
          stoppedBy = { id: item.id, reason: 'unavailable', message: 'circuit breaker open' };
          break;
        }
        const outcome = await upstream.post({
          body: JSON.stringify(item.payload),
          authorization:
            item.authorization ?? (this.deps.authToken ? `Bearer ${this.deps.authToken}` : undefined),
          idempotencyKey: item.idempotencyKey,
        });
        monitor.record(outcome);
        const at = new Date(clock()).toISOString();
        if (outcome.kind === 'unavailable') {
          const delay = backoffMs(item.attempts + 1, this.deps.retryBaseMs, this.deps.retryMaxMs);
          await queue.markRetry(item, { message: outcome.reason, at }, clock() + delay);
          stoppedBy = { id: item.id, reason: 'unavailable', message: outcome.reason };
          logger.info({ queueId: item.id, retryInMs: delay }, 'upstream unavailable during replay');
          break;
        }
        if (hasErrors(outcome.body) || outcome.status >= 400) {
          const first = outcome.body.errors?.[0];
          const message = first?.message ?? `upstream answered HTTP ${outcome.status}`;
          await queue.markRejected(item, {
            message,
            code: first?.extensions?.code,
            upstreamStatus: outcome.status,
            errors: outcome.body.errors,
            at,
          });
          stoppedBy = { id: item.id, reason: 'rejected', message };
          logger.warn(
            { queueId: item.id, error: message },
            'upstream rejected a queued mutation; replay stopped',
          );
          break;
        }
        // Invalidate before the mutation leaves the queue: a client that sees the queue empty (GET
        // /queue) and then reads gets an answer fetched after the invalidation, not one stored as
        // raced with it. (Were the removal to fail, the replay again would only invalidate again.)
        this.deps.onConfirmed(item, outcome.body.data);
        await queue.remove(item);
        await this.deps.outcomes.record({
          id: item.id,
          status: 'sent',
          at,
          createdAt: item.createdAt,
          attempts: item.attempts + 1,
          upstreamStatus: outcome.status,
          response: outcome.body,
        });
        flushed += 1;
      }
    } finally {
      if (flushed > 0) {
        logger.info({ flushed, remaining: queue.size }, 'replayed queued mutations');
        this.deps.afterReplay();
      }
    }
    return { flushed, remaining: queue.size, ...(stoppedBy ? { stoppedBy } : {}) };
  }
}
