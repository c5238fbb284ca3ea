import type { FeeEntry } from '../reference/load.js';
import type { PaygateClient } from './client.js';
import type { GatewayService } from './gateway-types.js';

type FiatEntry = Extract<FeeEntry, { deposit_fees: { type: string; amount: string }[] }> & {
  category: string;
};
type FiatFee = { type: string; amount: string };

/** A payout amount inside every bundled payout service's limits, for the payout prerequest. */
const PROBE_AMOUNT = '1000';

/** A gateway fee rule as fee items: the percentage, then the fixed part, minimum and maximum where non-zero. */
export function feeItems(fee: GatewayService['fee']): FiatFee[] {
  const items: FiatFee[] = [{ type: 'percent', amount: String(fee.rate) }];
  for (const [type, value] of [
    ['fixed', fee.fixed],
    ['min', fee.min],
    ['max', fee.max],
  ] as const) {
    if (Number(value) !== 0) items.push({ type, amount: String(value) });
  }
  return items;
}

/**
 * The fiat part of `/v3/fees` as the gateway will actually charge it: read from the gateway's
 * payment and payout prerequests of each currency with a merchant key, and cached for `ttlMs`. The
 * reference file's fiat entries stay where the gateway says nothing (a method it does not offer,
 * `svc_code`), and answer alone while the gateway has never been reached.
 */
export class GatewayFees {
  #cached: { entries: readonly FeeEntry[]; at: number } | undefined;
  #loading: Promise<readonly FeeEntry[]> | undefined;

  constructor(
    private readonly gateway: PaygateClient,
    private readonly reference: readonly FeeEntry[],
    private readonly currencies: readonly string[],
    private readonly now: () => number = Date.now,
    private readonly ttlMs = 60_000,
  ) {}

  async entries(): Promise<readonly FeeEntry[]> {
    const cached = this.#cached;
    if (cached && this.now() - cached.at < this.ttlMs) return cached.entries;
    this.#loading ??= this.#load().finally(() => {
      this.#loading = undefined;
    });
    return this.#loading;
  }

  async #load(): Promise<readonly FeeEntry[]> {
    const live = new Map<string, FiatEntry>();
    const entry = (method: string, currency: string) => {
      const key = `${method}:${currency}`;
      let found = live.get(key);
      if (!found) {
        found = { code: method, category: currency, deposit_fees: [], withdraw_fees: [] };
        live.set(key, found);
      }
      return found;
    };
    let reached = false;
    for (const currency of this.currencies) {
      if (!this.gateway.publicKey(currency)) continue;
      const [deposits, payouts] = await Promise.all([
        this.gateway.paymentPrerequest(currency),
        this.gateway.payoutPrerequest(currency, PROBE_AMOUNT),
      ]);
      if (deposits.ok) {
        reached = true;
        for (const service of Object.values(deposits.value.data.services)) {
          entry(service.method, currency).deposit_fees = feeItems(service.fee);
        }
      }
      if (payouts.ok) {
        reached = true;
        for (const service of Object.values(payouts.value.data.services)) {
          entry(service.method, currency).withdraw_fees = feeItems(service.fee);
        }
      }
    }
    if (!reached) return this.#cached?.entries ?? this.reference;
    const merged: FeeEntry[] = [];
    for (const fee of this.reference) {
      const key = `${fee.code}:${fee.category}`;
      const found = live.get(key);
      if (found) {
        merged.push(found);
        live.delete(key);
      } else {
        merged.push(fee);
      }
    }
    // Methods the gateway offers that the reference file does not list go after the fiat entries.
    const firstCoin = merged.findIndex((fee) => fee.category === 'coin');
    merged.splice(firstCoin < 0 ? merged.length : firstCoin, 0, ...live.values());
    this.#cached = { entries: merged, at: this.now() };
    return merged;
  }
}
