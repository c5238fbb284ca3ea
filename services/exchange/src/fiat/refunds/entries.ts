/**
 * Ledger movements of a fiat refund (pure builders, the withdrawal's discipline of
 * src/wallet/entries.ts): lock the refunded amount, then settle it to the external account or give
 * it back. Each step has its own idempotency key, so a step retried never moves money twice.
 */
import { type Built, validateEntry } from '../../ledger/entry.js';

export interface RefundFunds {
  readonly id: number;
  readonly depositId: number;
  readonly accountId: number;
  readonly currency: string;
  readonly amount: bigint;
}

export function refundLock(r: RefundFunds): Built {
  return validateEntry({
    kind: 'refund_lock',
    reason: `refund ${r.id} of deposit ${r.depositId} requested`,
    idempotencyKey: `fiat-refund-lock:${r.id}`,
    legs: [
      { accountId: r.accountId, currency: r.currency, bucket: 'available', amount: -r.amount },
      { accountId: r.accountId, currency: r.currency, bucket: 'locked', amount: r.amount },
    ],
  });
}

export function refundRelease(r: RefundFunds): Built {
  return validateEntry({
    kind: 'refund_release',
    reason: `refund ${r.id} of deposit ${r.depositId} failed`,
    idempotencyKey: `fiat-refund-release:${r.id}`,
    legs: [
      { accountId: r.accountId, currency: r.currency, bucket: 'locked', amount: -r.amount },
      { accountId: r.accountId, currency: r.currency, bucket: 'available', amount: r.amount },
    ],
  });
}

/** The gateway paid the payer back: the locked funds leave to the external account. */
export function refundSettle(r: RefundFunds, externalId: number): Built {
  return validateEntry({
    kind: 'refund',
    reason: `refund ${r.id} of deposit ${r.depositId} paid`,
    idempotencyKey: `fiat-refund-settle:${r.id}`,
    legs: [
      { accountId: r.accountId, currency: r.currency, bucket: 'locked', amount: -r.amount },
      { accountId: externalId, currency: r.currency, bucket: 'available', amount: r.amount },
    ],
  });
}

/** The gateway's reference of refund `id`, and back. */
export function refundReference(id: number): string {
  return `refund-${id}`;
}

export function refundIdOf(reference: string): number | undefined {
  const match = /^refund-([1-9]\d{0,9})$/.exec(reference);
  return match && Number(match[1]) <= 2_147_483_647 ? Number(match[1]) : undefined;
}
