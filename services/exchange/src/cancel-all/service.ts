import type { Sql } from '../db/database.js';
import type { OrderOutcome } from '../orders/requests.js';
import type { OrderService } from '../orders/service.js';
import { type ClaimedSwitch, claimDue, markFired, openOrdersOfKey, releaseClaim } from './store.js';

/**
 * Cancels the given orders of `accountId` through the normal cancel path (OrderService.cancel: the
 * market's writer here, or its owner in a cluster), all at once as `cancel/multy` does; the writers
 * group them into their batches. An order that ended meanwhile is a refusal among the outcomes.
 */
export function cancelOrders(
  orders: OrderService,
  accountId: number,
  ids: readonly number[],
): Promise<PromiseSettledResult<OrderOutcome>[]> {
  return Promise.allSettled(ids.map((id) => orders.cancel(accountId, id)));
}

/** What one firing did (the metrics and the log hear it). */
export interface Firing {
  readonly claimed: ClaimedSwitch;
  /** Orders the firing cancelled. */
  readonly cancelled: number;
  /** Milliseconds from the trigger to the recorded firing. */
  readonly lateMs: number;
}

export interface SwitchFiringDeps {
  readonly db: Sql;
  readonly orders: OrderService;
  readonly now: () => number;
  /** This node's name in `cancel_after.claimed_by` (the cluster's NODE_ID, or one process's). */
  readonly node: string;
  readonly claimMs: number;
  readonly fired: (firing: Firing) => void;
  /** A firing that could not cancel every order (a market between owners, the database): retried. */
  readonly failed: (claimed: ClaimedSwitch, error: unknown) => void;
}

/**
 * One check: claims the due switches nobody holds and fires each: every open order of its key is
 * cancelled, then the firing is recorded (once: a switch fires again only after a renewal). When a
 * cancel could not be run (503 while a market changes hands, the database out of reach) the claim is
 * given up and the next check tries again; the orders already cancelled are no longer open then, so
 * no order is cancelled twice.
 */
export async function fireDueSwitches(deps: SwitchFiringDeps): Promise<void> {
  const claimed = await claimDue(deps.db, deps.node, deps.now(), deps.claimMs);
  await Promise.all(claimed.map((one) => fireOne(deps, one)));
}

async function fireOne(deps: SwitchFiringDeps, claimed: ClaimedSwitch): Promise<void> {
  try {
    const ids = await openOrdersOfKey(deps.db, claimed.keyId);
    const outcomes = await cancelOrders(deps.orders, claimed.accountId, ids);
    const thrown = outcomes.find((outcome) => outcome.status === 'rejected');
    if (thrown) throw thrown.reason;
    const now = deps.now();
    if (await markFired(deps.db, claimed, deps.node, now)) {
      const cancelled = outcomes.filter((o) => o.status === 'fulfilled' && o.value.ok).length;
      deps.fired({ claimed, cancelled, lateMs: now - claimed.triggerAt });
    }
  } catch (error) {
    deps.failed(claimed, error);
    await releaseClaim(deps.db, claimed, deps.node).catch(() => undefined);
  }
}

/** Runs `fireDueSwitches` every `checkMs`, one check at a time, until closed. */
export class SwitchScheduler {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;

  constructor(
    private readonly deps: SwitchFiringDeps,
    private readonly checkMs: number,
    private readonly onError: (error: unknown) => void,
  ) {}

  start(): void {
    this.timer = setInterval(() => this.check(), this.checkMs);
    this.timer.unref();
  }

  /** One check now, unless one is still running. */
  check(): void {
    if (this.running) return;
    this.running = fireDueSwitches(this.deps)
      .catch(this.onError)
      .finally(() => {
        this.running = undefined;
      });
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.running;
  }
}
