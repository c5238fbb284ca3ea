import type { PendingCallback } from '../callbacks/outbox.js';
import { type CallbackFaults, type FaultPlan, LONGEST_FAULT_MS, planFaults } from './faults.js';

/** A merchant's faults and the seed its run uses. */
export interface MerchantFaults {
  readonly faults: CallbackFaults;
  readonly seed: number;
}

interface Held {
  readonly callback: PendingCallback;
  readonly release: () => void;
}

/**
 * The sandbox at delivery time: each callback's plan (from its merchant's seed and its identity), and
 * the bookkeeping of the `reorder` fault: a held callback goes out once a callback written after it,
 * of another object, has been acknowledged, or when its longest hold is over.
 */
export class CallbackSandbox {
  readonly #held = new Set<Held>();

  constructor(private readonly merchants: ReadonlyMap<string, MerchantFaults>) {}

  /** How long a claim must stay leased so a held, delayed and doubled delivery ends inside it. */
  leaseMs(timeoutMs: number): number {
    return this.merchants.size === 0 ? timeoutMs + 5_000 : 2 * timeoutMs + 5_000 + 2 * LONGEST_FAULT_MS;
  }

  /** The faults of this attempt, or undefined when its merchant has none. */
  planFor(callback: PendingCallback): FaultPlan | undefined {
    const merchant = this.merchants.get(callback.merchantId);
    if (!merchant) return undefined;
    // The key is what the merchant knows the callback by (its own reference, the event's sequence)
    // and the attempt: the same references give the same faults in every run of a seed.
    const body = JSON.parse(callback.body) as {
      reference_id?: unknown;
      sequence?: unknown;
      status?: unknown;
    };
    const key = [
      callback.merchantId,
      callback.objectType,
      String(body.reference_id),
      String(body.sequence ?? body.status),
      callback.attempts,
    ].join('/');
    return planFaults(merchant.faults, merchant.seed, key);
  }

  /** Waits (at most `maxMs`) until a later callback of another object is acknowledged. */
  hold(callback: PendingCallback, maxMs: number): Promise<void> {
    return new Promise((resolve) => {
      const held: Held = {
        callback,
        release: () => {
          clearTimeout(timer);
          this.#held.delete(held);
          resolve();
        },
      };
      const timer = setTimeout(held.release, maxMs);
      this.#held.add(held);
    });
  }

  /** A callback was acknowledged: releases the held ones written before it, of other objects. */
  acknowledged(callback: PendingCallback): void {
    for (const held of [...this.#held]) {
      const other =
        held.callback.objectType !== callback.objectType || held.callback.objectId !== callback.objectId;
      if (other && held.callback.id < callback.id) held.release();
    }
  }
}
