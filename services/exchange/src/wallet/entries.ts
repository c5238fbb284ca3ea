/**
 * Ledger movements of the wallet (pure builders, in the style of src/ledger/entry.ts). Every one
 * carries an idempotency key derived from the deposit or withdrawal id, so a step retried after a
 * crash or by a second process never moves money twice.
 */
import { type Built, type Leg, validateEntry } from '../ledger/entry.js';

/** A deposit credited: the external account pays the owner's available balance. */
export function depositCredit(
  depositId: number,
  accountId: number,
  externalId: number,
  currency: string,
  amount: bigint,
  idempotencyKey = `deposit-credit:${depositId}`,
): Built {
  if (amount <= 0n) return { ok: false, problem: 'not_positive', detail: 'a deposit must be positive' };
  return validateEntry({
    kind: 'deposit',
    reason: `deposit ${depositId}`,
    idempotencyKey,
    legs: [
      { accountId, currency, bucket: 'available', amount },
      { accountId: externalId, currency, bucket: 'available', amount: -amount },
    ],
  });
}

/** What a withdrawal holds: the total in its currency, and the fee when it is charged in another. */
export interface WithdrawalFunds {
  readonly id: number;
  readonly accountId: number;
  readonly currency: string;
  /** What the recipient gets (minor units of `currency`). */
  readonly amount: bigint;
  /** The fee (minor units of `feeCurrency`). */
  readonly fee: bigint;
  readonly feeCurrency: string;
  /** Debited in `currency`: amount + fee when the fee is in the same currency, else amount. */
  readonly totalAmount: bigint;
}

/** Locked amounts per currency of a withdrawal. */
export function heldFunds(w: WithdrawalFunds): Map<string, bigint> {
  const held = new Map<string, bigint>([[w.currency, w.totalAmount]]);
  if (w.feeCurrency !== w.currency && w.fee > 0n) held.set(w.feeCurrency, w.fee);
  return held;
}

function lockLegs(w: WithdrawalFunds, sign: bigint): Leg[] {
  const legs: Leg[] = [];
  for (const [currency, amount] of heldFunds(w)) {
    legs.push({ accountId: w.accountId, currency, bucket: 'available', amount: -amount * sign });
    legs.push({ accountId: w.accountId, currency, bucket: 'locked', amount: amount * sign });
  }
  return legs;
}

/** Funds of a new request move from available to locked. */
export function withdrawalLock(w: WithdrawalFunds): Built {
  return validateEntry({
    kind: 'withdrawal_lock',
    reason: `withdrawal ${w.id} requested`,
    idempotencyKey: `withdrawal-lock:${w.id}`,
    legs: lockLegs(w, 1n),
  });
}

/** Funds of a cancelled, expired or failed request go back to available. */
export function withdrawalRelease(w: WithdrawalFunds, why: string): Built {
  return validateEntry({
    kind: 'withdrawal_release',
    reason: `withdrawal ${w.id} ${why}`,
    idempotencyKey: `withdrawal-release:${w.id}`,
    legs: lockLegs(w, -1n),
  });
}

/** The request was sent: the locked funds leave to the external account, the fee to the fee account. */
export function withdrawalSettle(w: WithdrawalFunds, externalId: number, feeAccountId: number): Built {
  const legs: Leg[] = [];
  for (const [currency, amount] of heldFunds(w)) {
    legs.push({ accountId: w.accountId, currency, bucket: 'locked', amount: -amount });
  }
  legs.push({ accountId: externalId, currency: w.currency, bucket: 'available', amount: w.amount });
  if (w.fee > 0n)
    legs.push({ accountId: feeAccountId, currency: w.feeCurrency, bucket: 'available', amount: w.fee });
  return validateEntry({
    kind: 'withdrawal',
    reason: `withdrawal ${w.id} sent`,
    idempotencyKey: `withdrawal-settle:${w.id}`,
    legs,
  });
}
