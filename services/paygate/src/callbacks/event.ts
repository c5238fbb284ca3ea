import type { Invoice } from '../store/invoices.js';
import type { Payout } from '../store/payouts.js';

/** The callback body of gateway-contract.md "Callbacks". */
export interface CallbackEvent {
  readonly event_id: string;
  readonly object: 'invoice' | 'payout' | 'refund';
  readonly id: string;
  readonly reference_id: string;
  readonly status: string;
  readonly currency: string;
  readonly amount: string;
  readonly fee: string;
  readonly service: string;
  readonly test_mode: boolean;
  readonly occurred_at: string;
  /** Why a payout, invoice or refund failed (`null` otherwise). */
  readonly failure_reason?: string | null;
  /** A refund's invoice. */
  readonly invoice_id?: string;
  readonly invoice_reference_id?: string;
  /** An `attempt_failed` event's card attempt (1, 2, ...) and the cards the payer has left. */
  readonly attempt?: number;
  readonly attempts_left?: number;
}

/**
 * The `status` of an event saying one card did not pay (declined, insufficient funds, 3-D Secure
 * failed or cancelled). Not a status an invoice ever has: the invoice stays `created` for another
 * card, or its `failed` event follows when that was the last attempt. Stripe's
 * `payment_intent.payment_failed` plays this part.
 */
export const ATTEMPT_FAILED = 'attempt_failed';

/**
 * One event per change: the id names the object and the status it reached, so a status is
 * announced once whatever retries happen (`inv_x:success`).
 */
export function invoiceEvent(invoice: Invoice): CallbackEvent {
  return {
    event_id: `${invoice.id}:${invoice.status}`,
    object: 'invoice',
    id: invoice.id,
    reference_id: invoice.referenceId,
    status: invoice.status,
    currency: invoice.currency,
    amount: invoice.amount,
    fee: invoice.fee,
    service: invoice.service,
    test_mode: invoice.testMode,
    occurred_at: invoice.updatedAt.toISOString(),
    failure_reason: invoice.failureReason,
  };
}

/** One card attempt that did not pay: `attempt` of the invoice's cards, `reason` the processor's. */
export function attemptFailedEvent(
  invoice: Invoice,
  attempt: { readonly number: number; readonly left: number; readonly reason: string; readonly at: Date },
): CallbackEvent {
  return {
    ...invoiceEvent(invoice),
    event_id: `${invoice.id}:${ATTEMPT_FAILED}:${attempt.number}`,
    status: ATTEMPT_FAILED,
    occurred_at: attempt.at.toISOString(),
    failure_reason: attempt.reason,
    attempt: attempt.number,
    attempts_left: attempt.left,
  };
}

export function payoutEvent(payout: Payout): CallbackEvent {
  return {
    event_id: `${payout.id}:${payout.status}`,
    object: 'payout',
    id: payout.id,
    reference_id: payout.referenceId,
    status: payout.status,
    currency: payout.currency,
    amount: payout.amount,
    fee: payout.fee,
    service: payout.service,
    test_mode: payout.testMode,
    occurred_at: payout.updatedAt.toISOString(),
    failure_reason: payout.failureReason,
  };
}
