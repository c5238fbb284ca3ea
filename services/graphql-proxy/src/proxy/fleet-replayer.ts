import type { Logger } from 'pino';
import type { FleetEvents } from '../fleet/events.js';
import type { RedisQueue, ReplayStep } from '../queue/redis-queue.js';
import type { QueuedMutation } from '../queue/store.js';
import type { UpstreamClient, UpstreamMonitor } from '../upstream/client.js';
import { type ReplayResult, type ReplaySource, type ReplayVerdict, replayQueue } from './replay-step.js';

export interface FleetReplayerDeps {
  readonly queue: RedisQueue;
  readonly events: FleetEvents;
  readonly upstream: UpstreamClient;
  readonly monitor: UpstreamMonitor;
  readonly authToken: string | undefined;
  readonly clock: () => number;
  readonly retryBaseMs: number;
  readonly retryMaxMs: number;
  readonly probeIntervalMs: number;
  /** QUEUE_LEASE_MS. */
  readonly leaseMs: number;
  readonly instanceId: string;
  readonly logger: Logger;
  /** For each confirmed mutation (cache invalidation), awaited before it leaves the queue. */
  readonly onConfirmed: (item: QueuedMutation, data: unknown) => Promise<unknown>;
  /** After a replay that confirmed at least one mutation (local sync). */
  readonly afterReplay: () => void;
}

const PROBE_BODY = JSON.stringify({ query: 'query ProxyProbe { __typename }', operationName: 'ProxyProbe' });

/**
 * The replay of the fleet's queue (QUEUE_STORE=redis): the same rules as `Replayer` (in order, one at a
 * time, with each mutation's idempotency key; stop at a rejected head; backoff when the upstream is
 * unavailable), done by whichever instance holds the replay lease. Every instance ticks; the one that
 * gets the lease replays and renews it every third of QUEUE_LEASE_MS while it works; when it dies its
 * lease expires and the next tick of another instance takes over, with a new fencing token that makes
 * the old holder's late writes fail. A forced replay (`POST /flush`, retry, discard) asked of an
 * instance without the lease is passed to the holder over the fleet channel.
 */
export class FleetReplayer {
  private running: Promise<ReplayResult> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private probing = false;
  private forceAgain = false;
  /** The lease value while this instance replays. */
  private lease: string | undefined;

  constructor(private readonly deps: FleetReplayerDeps) {
    deps.monitor.onOnline(() => void this.replay(false));
    deps.events.on((message) => {
      if (message.kind === 'flush' && message.from !== deps.instanceId) {
        if (this.running) this.forceAgain = true;
        else void this.replay(true);
      }
    });
  }

  /** True while this instance holds the lease and replays. */
  get replaying(): boolean {
    return this.lease !== undefined;
  }

  start(): void {
    this.timer = setInterval(() => void this.tick(), this.deps.probeIntervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
  }

  async idle(): Promise<void> {
    await this.running;
  }

  private async tick(): Promise<void> {
    if (this.running || this.probing) return;
    const size = await this.deps.queue.size().catch(() => 0);
    if (size > 0 && this.deps.monitor.allows()) {
      await this.replay(false);
      return;
    }
    if (this.deps.monitor.state !== 'online' || size > 0 || !this.deps.monitor.allows()) {
      this.probing = true;
      try {
        this.deps.monitor.record(await this.deps.upstream.post({ body: PROBE_BODY }));
      } finally {
        this.probing = false;
      }
    }
  }

  replay(force: boolean): Promise<ReplayResult> {
    this.running ??= this.run(force)
      .catch(async (error: unknown): Promise<ReplayResult> => {
        // Redis unavailable or an upstream error: logged, retried on the next tick, never a crash.
        this.deps.logger.error({ err: error }, 'fleet replay failed');
        return { flushed: 0, remaining: await this.deps.queue.size().catch(() => -1) };
      })
      .finally(() => {
        this.running = undefined;
        if (this.forceAgain) {
          this.forceAgain = false;
          void this.replay(true);
        }
      });
    return this.running;
  }

  private async run(force: boolean): Promise<ReplayResult> {
    const { queue, leaseMs, logger } = this.deps;
    const lease = await queue.acquireLease(leaseMs);
    if (lease === undefined) {
      const [head, holder, remaining] = await Promise.all([queue.head(), queue.leaseHolder(), queue.size()]);
      if (force) {
        await this.deps.events.publish({ kind: 'flush', from: this.deps.instanceId });
      }
      return {
        flushed: 0,
        remaining,
        ...(head
          ? {
              stoppedBy: {
                id: head.id,
                reason: 'leased' as const,
                message: `replayed by instance ${holder?.split('|')[0] ?? 'unknown'}`,
              },
            }
          : {}),
      };
    }
    this.lease = lease;
    let lost = false;
    const renew = setInterval(
      () => {
        queue.renewLease(lease, leaseMs).then(
          (held) => {
            if (!held) lost = true;
          },
          () => undefined, // Redis down: the next step's check fails, or the lease expires.
        );
      },
      Math.max(50, Math.floor(leaseMs / 3)),
    );
    renew.unref();
    let flushed = 0;
    try {
      const result = await replayQueue(
        this.deps,
        new RedisReplaySource(queue, lease, logger),
        force,
        () => lost,
      );
      flushed = result.flushed;
      return result;
    } finally {
      clearInterval(renew);
      this.lease = undefined;
      await queue.releaseLease(lease).catch(() => undefined);
      if (flushed > 0) {
        logger.info({ flushed }, 'replayed queued mutations (fleet)');
        this.deps.afterReplay();
      }
    }
  }
}

type SendStep = Extract<ReplayStep, { kind: 'send' }>;

/**
 * The fleet's queue in Redis as a replay source, under this replayer's lease: each step is a Lua
 * script that first checks the lease (fencing token), so a replayer that lost it can neither start a
 * send nor record one. `begin` records the send before it is made; a send recorded by a previous
 * lease holder that never recorded its answer makes the mutation one in doubt.
 */
class RedisReplaySource implements ReplaySource<SendStep> {
  constructor(
    private readonly queue: RedisQueue,
    private readonly lease: string,
    private readonly logger: Logger,
  ) {}

  head(): Promise<QueuedMutation | undefined> {
    return this.queue.head();
  }

  size(): Promise<number> {
    return this.queue.size();
  }

  async next(force: boolean, now: number) {
    const step = await this.queue.begin(this.lease, force, now);
    switch (step.kind) {
      case 'again':
        return { kind: 'again' } as const;
      case 'rejected':
        return {
          kind: 'stop',
          stoppedBy: { id: step.item.id, reason: 'rejected', message: step.item.lastError?.message },
        } as const;
      case 'backoff':
        return { kind: 'stop', stoppedBy: { id: step.item.id, reason: 'backoff' } } as const;
      case 'send':
        return {
          kind: 'send',
          item: step.item,
          inDoubt: step.previousSend !== undefined || step.item.maybeSent === true,
          ticket: step,
        } as const;
      default:
        return { kind: 'stop' } as const; // fenced (the lease was lost) or empty
    }
  }

  async settle(step: SendStep, item: QueuedMutation, verdict: ReplayVerdict): Promise<boolean> {
    const written = await this.queue.finish(
      this.lease,
      step,
      verdict.kind === 'sent'
        ? { kind: 'sent', outcome: verdict.outcome }
        : { kind: 'update', item: verdict.item, event: verdict.kind === 'retry' ? 'retry' : 'rejected' },
    );
    if (written !== 'ok') {
      // Fenced: another instance took the lease (this one was too slow); it finds the send recorded
      // and asks the upstream about the key. Changed: an operator discarded it meanwhile.
      this.logger.warn({ queueId: item.id, written }, 'replayed mutation not recorded');
    }
    return written === 'ok';
  }
}
