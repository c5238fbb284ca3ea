import type { Logger } from 'pino';
import { backoffMs } from '../cache/policy.js';
import type { FleetEvents } from '../fleet/events.js';
import type { RedisQueue } from '../queue/redis-queue.js';
import type { QueuedMutation } from '../queue/store.js';
import { hasErrors, type UpstreamClient, type UpstreamMonitor } from '../upstream/client.js';
import type { ReplayResult } from './replayer.js';

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
      return await this.steps(
        lease,
        force,
        () => lost,
        () => (flushed += 1),
      );
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

  private async steps(
    lease: string,
    force: boolean,
    lost: () => boolean,
    confirmed: () => void,
  ): Promise<ReplayResult> {
    const { queue, upstream, monitor, clock, logger } = this.deps;
    let flushed = 0;
    for (;;) {
      if (lost()) break;
      if (!force && !monitor.allows()) {
        const head = await queue.head();
        if (!head) break;
        return {
          flushed,
          remaining: await queue.size(),
          stoppedBy: { id: head.id, reason: 'unavailable', message: 'circuit breaker open' },
        };
      }
      const step = await queue.begin(lease, force, clock());
      if (step.kind === 'again') continue;
      if (step.kind === 'rejected') {
        return {
          flushed,
          remaining: await queue.size(),
          stoppedBy: { id: step.item.id, reason: 'rejected', message: step.item.lastError?.message },
        };
      }
      if (step.kind === 'backoff') {
        return { flushed, remaining: await queue.size(), stoppedBy: { id: step.item.id, reason: 'backoff' } };
      }
      if (step.kind !== 'send') break; // fenced (the lease was lost) or empty
      const item = step.item;
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
        const next: QueuedMutation = {
          ...item,
          attempts: item.attempts + 1,
          lastError: { message: outcome.reason, at },
          nextAttemptAt: clock() + delay,
        };
        await queue.finish(lease, step, { kind: 'update', item: next, event: 'retry' });
        logger.info({ queueId: item.id, retryInMs: delay }, 'upstream unavailable during replay');
        return {
          flushed,
          remaining: await queue.size(),
          stoppedBy: { id: item.id, reason: 'unavailable', message: outcome.reason },
        };
      }
      if (hasErrors(outcome.body) || outcome.status >= 400) {
        const first = outcome.body.errors?.[0];
        const message = first?.message ?? `upstream answered HTTP ${outcome.status}`;
        const next: QueuedMutation = {
          ...item,
          attempts: item.attempts + 1,
          status: 'rejected',
          lastError: {
            message,
            code: first?.extensions?.code,
            upstreamStatus: outcome.status,
            errors: outcome.body.errors,
            at,
          },
        };
        await queue.finish(lease, step, { kind: 'update', item: next, event: 'rejected' });
        logger.warn(
          { queueId: item.id, error: message },
          'upstream rejected a queued mutation; replay stopped',
        );
        return {
          flushed,
          remaining: await queue.size(),
          stoppedBy: { id: item.id, reason: 'rejected', message },
        };
      }
      // Invalidate before the mutation leaves the queue (see Replayer).
      await this.deps.onConfirmed(item, outcome.body.data);
      const written = await queue.finish(lease, step, {
        kind: 'sent',
        outcome: {
          id: item.id,
          status: 'sent',
          at,
          createdAt: item.createdAt,
          attempts: item.attempts + 1,
          upstreamStatus: outcome.status,
          response: outcome.body,
        },
      });
      if (written !== 'ok') {
        // Fenced: another instance took the lease (this one was too slow); it sends this mutation
        // again with the same idempotency key. Changed: an operator discarded it meanwhile.
        logger.warn({ queueId: item.id, written }, 'replayed mutation not recorded as sent');
        break;
      }
      flushed += 1;
      confirmed();
    }
    return { flushed, remaining: await queue.size() };
  }
}
