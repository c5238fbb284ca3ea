import { Type } from 'typebox';
import type { Invoice } from '../store/invoices.js';
import type { Payout } from '../store/payouts.js';

export const InvoiceSchema = Type.Object({
  id: Type.String(),
  reference_id: Type.String(),
  status: Type.String({ description: 'created | processing | success | failed | expired' }),
  currency: Type.String(),
  amount: Type.String({ description: 'credited to the merchant' }),
  fee: Type.String(),
  total: Type.String({ description: 'paid by the payer: amount + fee' }),
  service: Type.String(),
  description: Type.String(),
  card_masked: Type.Union([Type.String(), Type.Null()]),
  failure_reason: Type.Union([Type.String(), Type.Null()]),
  card_attempts: Type.Integer({ description: 'cards tried on the hosted page that did not pay' }),
  last_decline: Type.Union(
    [
      Type.Object({
        reason: Type.String({
          description: 'declined | insufficient_funds | authentication_failed | authentication_canceled',
        }),
        at: Type.String({ description: 'when that card was refused' }),
      }),
      Type.Null(),
    ],
    { description: 'the last card that did not pay (kept after another card pays); null: none' },
  ),
  test_mode: Type.Boolean(),
  created_at: Type.String(),
  updated_at: Type.String(),
  expires_at: Type.String(),
});

export const PayoutSchema = Type.Object({
  id: Type.String(),
  reference_id: Type.String(),
  status: Type.String({ description: 'processing | success | failed' }),
  currency: Type.String(),
  amount: Type.String(),
  fee: Type.String(),
  service: Type.String(),
  destination_masked: Type.String(),
  failure_reason: Type.Union([Type.String(), Type.Null()]),
  test_mode: Type.Boolean(),
  created_at: Type.String(),
  updated_at: Type.String(),
});

export function invoiceJson(invoice: Invoice) {
  return {
    id: invoice.id,
    reference_id: invoice.referenceId,
    status: invoice.status,
    currency: invoice.currency,
    amount: invoice.amount,
    fee: invoice.fee,
    total: invoice.total,
    service: invoice.service,
    description: invoice.description,
    card_masked: invoice.cardMasked,
    failure_reason: invoice.failureReason,
    card_attempts: invoice.cardAttempts,
    last_decline: invoice.lastDecline
      ? { reason: invoice.lastDecline.reason, at: invoice.lastDecline.at.toISOString() }
      : null,
    test_mode: invoice.testMode,
    created_at: invoice.createdAt.toISOString(),
    updated_at: invoice.updatedAt.toISOString(),
    expires_at: invoice.expiresAt.toISOString(),
  };
}

export function payoutJson(payout: Payout) {
  return {
    id: payout.id,
    reference_id: payout.referenceId,
    status: payout.status,
    currency: payout.currency,
    amount: payout.amount,
    fee: payout.fee,
    service: payout.service,
    destination_masked: payout.destinationMasked,
    failure_reason: payout.failureReason,
    test_mode: payout.testMode,
    created_at: payout.createdAt.toISOString(),
    updated_at: payout.updatedAt.toISOString(),
  };
}
