/**
 * Journal entries of the double-entry ledger (pure). Every change of a balance is a leg; the legs of
 * one entry sum to zero per currency, so money only moves between accounts (and between the
 * `available` and `locked` buckets of one account), never appears or vanishes.
 * Amounts are bigint minor units of the currency.
 */

export type Bucket = 'available' | 'locked';

export interface Leg {
  readonly accountId: number;
  readonly currency: string;
  readonly bucket: Bucket;
  readonly amount: bigint;
}

export interface JournalEntry {
  /** What kind of movement: adjustment, lock, unlock, trade, transfer, ... */
  readonly kind: string;
  readonly reason: string;
  /** When set, posting the same key twice applies the entry once. */
  readonly idempotencyKey?: string;
  readonly legs: readonly Leg[];
}

export type EntryProblem = 'no_legs' | 'zero_leg' | 'unbalanced' | 'not_positive';

export type Built = { ok: true; entry: JournalEntry } | { ok: false; problem: EntryProblem; detail: string };

/** Checks the double-entry invariant: at least two legs, none zero, sum zero per currency. */
export function validateEntry(entry: JournalEntry): Built {
  if (entry.legs.length < 2)
    return { ok: false, problem: 'no_legs', detail: 'an entry needs two legs or more' };
  const sums = new Map<string, bigint>();
  for (const leg of entry.legs) {
    if (leg.amount === 0n) return { ok: false, problem: 'zero_leg', detail: 'a leg moves nothing' };
    sums.set(leg.currency, (sums.get(leg.currency) ?? 0n) + leg.amount);
  }
  for (const [currency, sum] of sums) {
    if (sum !== 0n) return { ok: false, problem: 'unbalanced', detail: `${currency} legs sum to ${sum}` };
  }
  return { ok: true, entry };
}

function positive(amount: bigint, what: string): Built | undefined {
  return amount > 0n ? undefined : { ok: false, problem: 'not_positive', detail: `${what} must be positive` };
}

/** Operator adjustment: credit (amount > 0) or debit (amount < 0) against the external account. */
export function adjustment(
  accountId: number,
  externalId: number,
  currency: string,
  amount: bigint,
  reason: string,
): Built {
  return validateEntry({
    kind: 'adjustment',
    reason,
    legs: [
      { accountId, currency, bucket: 'available', amount },
      { accountId: externalId, currency, bucket: 'available', amount: -amount },
    ],
  });
}

/** Moves funds from available to locked (an order is accepted) or back (`unlock`: cancelled). */
export function lockFunds(
  accountId: number,
  currency: string,
  amount: bigint,
  reason: string,
  unlock = false,
): Built {
  const bad = positive(amount, 'a locked amount');
  if (bad) return bad;
  const sign = unlock ? -1n : 1n;
  return validateEntry({
    kind: unlock ? 'unlock' : 'lock',
    reason,
    legs: [
      { accountId, currency, bucket: 'available', amount: -amount * sign },
      { accountId, currency, bucket: 'locked', amount: amount * sign },
    ],
  });
}

/** A transfer of available funds between two accounts (transfer codes, fee collection). */
export function transfer(
  fromId: number,
  toId: number,
  currency: string,
  amount: bigint,
  reason: string,
): Built {
  const bad = positive(amount, 'a transferred amount');
  if (bad) return bad;
  return validateEntry({
    kind: 'transfer',
    reason,
    legs: [
      { accountId: fromId, currency, bucket: 'available', amount: -amount },
      { accountId: toId, currency, bucket: 'available', amount },
    ],
  });
}

export interface Fill {
  readonly buyerId: number;
  readonly sellerId: number;
  readonly feeAccountId: number;
  readonly base: string;
  readonly quote: string;
  /** Base amount traded: leaves the seller's locked funds. */
  readonly baseAmount: bigint;
  /** Quote amount paid: leaves the buyer's locked funds. */
  readonly quoteAmount: bigint;
  /** Fee the buyer pays, in base (taken from what the buyer receives). */
  readonly buyerFee: bigint;
  /** Fee the seller pays, in quote (taken from what the seller receives). */
  readonly sellerFee: bigint;
  readonly idempotencyKey?: string;
}

/** Settles one fill: locked funds change hands, fees go to the fee account. */
export function settleFill(fill: Fill, reason: string): Built {
  const bad = positive(fill.baseAmount, 'a base amount') ?? positive(fill.quoteAmount, 'a quote amount');
  if (bad) return bad;
  if (
    fill.buyerFee < 0n ||
    fill.sellerFee < 0n ||
    fill.buyerFee > fill.baseAmount ||
    fill.sellerFee > fill.quoteAmount
  ) {
    return { ok: false, problem: 'not_positive', detail: 'fees must be between zero and the traded amount' };
  }
  const legs: Leg[] = [
    { accountId: fill.buyerId, currency: fill.quote, bucket: 'locked', amount: -fill.quoteAmount },
    { accountId: fill.sellerId, currency: fill.base, bucket: 'locked', amount: -fill.baseAmount },
    {
      accountId: fill.buyerId,
      currency: fill.base,
      bucket: 'available',
      amount: fill.baseAmount - fill.buyerFee,
    },
    {
      accountId: fill.sellerId,
      currency: fill.quote,
      bucket: 'available',
      amount: fill.quoteAmount - fill.sellerFee,
    },
    { accountId: fill.feeAccountId, currency: fill.base, bucket: 'available', amount: fill.buyerFee },
    { accountId: fill.feeAccountId, currency: fill.quote, bucket: 'available', amount: fill.sellerFee },
  ];
  return validateEntry({
    kind: 'trade',
    reason,
    ...(fill.idempotencyKey ? { idempotencyKey: fill.idempotencyKey } : {}),
    legs: legs.filter((leg) => leg.amount !== 0n),
  });
}

/**
 * Nets several entries into one: a leg per account, currency and bucket with the sum of its amounts,
 * legs that sum to zero dropped. Each entry sums to zero per currency, so the net entry does too and
 * every balance ends where posting the entries one by one would leave it. The order writer posts one
 * such entry per batch (a lock, the trades it made and the release of what it did not use are, in
 * the ledger, one movement of that batch; the trades themselves stay in the trades table). Returns
 * undefined when everything cancels out (an order placed and cancelled in the same batch).
 */
export function netEntry(
  kind: string,
  reason: string,
  entries: readonly JournalEntry[],
): JournalEntry | undefined {
  const sums = new Map<string, Leg>();
  for (const entry of entries) {
    for (const leg of entry.legs) {
      const key = `${leg.accountId}:${leg.currency}:${leg.bucket}`;
      const current = sums.get(key);
      sums.set(key, current ? { ...current, amount: current.amount + leg.amount } : leg);
    }
  }
  const legs = [...sums.values()].filter((leg) => leg.amount !== 0n);
  return legs.length === 0 ? undefined : { kind, reason, legs };
}
