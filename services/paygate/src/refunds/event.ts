import type { CallbackEvent } from '../callbacks/event.js';
import type { Refund } from './store.js';

/** The callback of a refund's status: `ref_x:success`, with the invoice it pays back. */
export function refundEvent(refund: Refund): CallbackEvent {
  return {
    event_id: `${refund.id}:${refund.status}`,
    object: 'refund',
    id: refund.id,
    reference_id: refund.referenceId,
    status: refund.status,
    currency: refund.currency,
    amount: refund.amount,
    fee: '0.00',
    service: refund.service,
    test_mode: refund.testMode,
    occurred_at: refund.updatedAt.toISOString(),
    failure_reason: refund.failureReason,
    invoice_id: refund.invoiceId,
    invoice_reference_id: refund.invoiceReferenceId,
  };
}
