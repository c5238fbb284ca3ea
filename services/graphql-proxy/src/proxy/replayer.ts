import type { Logger } from 'pino';
import type { MutationQueue } from '../queue/mutation-queue.js';
import type { OutcomeLog } from '../queue/outcomes.js';
import type { QueuedMutation } from '../queue/store.js';
import type { UpstreamClient, UpstreamMonitor } from '../upstream/client.js';
import { type ReplayResult, type ReplaySource, type ReplayVerdict, replayQueue } from './replay-step.js';

export type { ReplayResult } from './replay-step.js';

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
 * Replays the instance's queue (QUEUE_STORE=file) with the shared loop of `replay-step.ts`: in order,
 * one mutation at a time, with its idempotency key, never twice. A periodic tick probes the upstream while
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
    const { queue, logger } = this.deps;
    const result = await replayQueue(this.deps, new FileReplaySource(queue, this.deps.outcomes), force);
    if (result.flushed > 0) {
      logger.info({ flushed: result.flushed, remaining: queue.size }, 'replayed queued mutations');
      this.deps.afterReplay();
    }
    return result;
  }
}

/**
 * The instance's own queue (QUEUE_STORE=file) as a replay source. Before a mutation is first sent,
 * its record is rewritten with `maybeSent`, so a process killed after sending it and before removing
 * it asks the upstream about its key after the restart instead of sending it again.
 */
class FileReplaySource implements ReplaySource<undefined> {
  constructor(
    private readonly queue: MutationQueue,
    private readonly outcomes: OutcomeLog,
  ) {}

  async head(): Promise<QueuedMutation | undefined> {
    return this.queue.head();
  }

  async size(): Promise<number> {
    return this.queue.size;
  }

  async next(force: boolean, now: number) {
    const item = this.queue.head();
    if (item === undefined) return { kind: 'stop' } as const;
    if (item.status === 'rejected') {
      return {
        kind: 'stop',
        stoppedBy: { id: item.id, reason: 'rejected', message: item.lastError?.message },
      } as const;
    }
    if (!force && item.nextAttemptAt > now) {
      return { kind: 'stop', stoppedBy: { id: item.id, reason: 'backoff' } } as const;
    }
    const inDoubt = item.maybeSent === true;
    if (!inDoubt) await this.queue.markMaybeSent(item);
    return { kind: 'send', item, inDoubt, ticket: undefined } as const;
  }

  async settle(_ticket: undefined, item: QueuedMutation, verdict: ReplayVerdict): Promise<boolean> {
    if (verdict.kind === 'sent') {
      await this.queue.remove(item);
      await this.outcomes.record(verdict.outcome);
    } else {
      await this.queue.update(item, verdict.item);
    }
    return true;
  }
}
