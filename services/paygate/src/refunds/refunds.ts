import { randomBytes } from 'node:crypto';
import { enqueueCallback } from '../callbacks/outbox.js';
import type { Merchant } from '../catalog/catalog.js';
import { formatMinor, parseAmount } from '../domain/money.js';
import { ApiError } from '../errors.js';
import type { PaymentDeps } from '../payments/deps.js';
import { findInvoice, findInvoiceByReference } from '../store/invoices.js';
import { refundEvent } from './event.js';
import { refundIsDue, refundRoom } from './machine.js';
import {
  dueRefundIds,
  findRefund,
  findRefundByReference,
  insertRefund,
  type Refund,
  refundedAmount,
  settleRefund,
} from './store.js';

export interface CreateRefundInput {
  readonly referenceId: string;
  readonly invoiceReferenceId: string;
  readonly amount: string | number;
}

/** The sandbox processor refuses refunds to this test card (it also fails its payouts). */
const REFUND_FAILS_FOR_CARD = /0119$/;

function sameOrConflict(existing: Refund, invoiceReferenceId: string, amount: string): Refund {
  if (existing.invoiceReferenceId !== invoiceReferenceId || existing.amount !== amount) {
    throw new ApiError(
      'reference_conflict',
      `reference_id ${existing.referenceId} already has a refund of ${existing.amount} ${existing.currency} on invoice ${existing.invoiceReferenceId}`,
      'reference_id',
    );
  }
  return existing;
}

/**
 * Refunds all or part of a paid invoice. The invoice row is locked while the refunds already made are
 * summed and the new one is written, so concurrent refunds of one invoice queue up on the lock and
 * never exceed what was paid in total (the invoice's `amount`: the gateway's fee is not refunded).
 * A repeated reference answers the existing refund (`created: false`) when invoice and amount match.
 */
export async function createRefund(
  deps: PaymentDeps,
  merchant: Merchant,
  input: CreateRefundInput,
): Promise<{ refund: Refund; created: boolean }> {
  const now = new Date(deps.now());
  return deps.db.transaction(async (tx) => {
    const found = await findInvoiceByReference(tx, merchant.id, input.invoiceReferenceId);
    if (!found) {
      throw new ApiError('invoice_not_found', 'no invoice with this reference_id', 'invoice_reference_id');
    }
    const invoice = await findInvoice(tx, found.id, true);
    if (!invoice) throw new Error(`invoice ${found.id} vanished`);
    const precision = deps.catalog.precision.get(invoice.currency) ?? 2;
    const parsed = parseAmount(input.amount, precision);
    if (!parsed.ok) {
      throw new ApiError(
        'invalid_amount',
        `amount must be a positive decimal with at most ${precision} decimals`,
        'amount',
      );
    }
    const amount = formatMinor(parsed.minor, precision);
    const existing = await findRefundByReference(tx, merchant.id, input.referenceId);
    if (existing)
      return { refund: sameOrConflict(existing, input.invoiceReferenceId, amount), created: false };
    if (invoice.status !== 'success') {
      throw new ApiError(
        'invoice_not_paid',
        `invoice ${invoice.referenceId} is ${invoice.status}, not paid`,
        'invoice_reference_id',
      );
    }
    const paid = parseAmount(invoice.amount, precision);
    const refunded = parseAmount(await refundedAmount(tx, invoice.id), precision);
    const room = refundRoom(paid.ok ? paid.minor : 0n, refunded.ok ? refunded.minor : 0n, parsed.minor);
    if (!room.ok) {
      throw new ApiError(
        'refund_exceeds_paid',
        `at most ${formatMinor(room.refundable, precision)} ${invoice.currency} of invoice ${invoice.referenceId} can still be refunded`,
        'amount',
      );
    }
    const id = `ref_${randomBytes(10).toString('hex')}`;
    const inserted = await insertRefund(tx, {
      id,
      merchantId: merchant.id,
      referenceId: input.referenceId,
      invoiceId: invoice.id,
      currency: invoice.currency,
      amount,
      settleAt: new Date(now.getTime() + deps.payoutSettleMs),
      testMode: merchant.testMode,
      createdAt: now,
    });
    if (!inserted) {
      // A concurrent request with the same reference on another invoice's lock won the insert.
      const winner = await findRefundByReference(tx, merchant.id, input.referenceId);
      if (!winner) throw new Error('refund conflict without a row');
      return { refund: sameOrConflict(winner, input.invoiceReferenceId, amount), created: false };
    }
    const refund = await findRefund(tx, id);
    if (!refund) throw new Error(`refund ${id} vanished`);
    await enqueueCallback(tx, merchant.id, refundEvent(refund), now);
    return { refund, created: true };
  });
}

/** Settles the refunds whose processor outcome is due; returns how many. */
export async function settleDueRefunds(deps: PaymentDeps, limit = 50): Promise<number> {
  const ids = await dueRefundIds(deps.db, new Date(deps.now()), limit);
  for (const id of ids) {
    await deps.db.transaction(async (tx) => {
      const now = new Date(deps.now());
      const refund = await findRefund(tx, id, true);
      if (!refund || !refundIsDue(refund.status, refund.settleAt.getTime(), now.getTime())) return;
      const invoice = await findInvoice(tx, refund.invoiceId);
      const fails = REFUND_FAILS_FOR_CARD.test(invoice?.cardMasked ?? '');
      await settleRefund(tx, id, fails ? 'failed' : 'success', fails ? 'processor_error' : null, now);
      const settled = await findRefund(tx, id);
      if (settled) await enqueueCallback(tx, refund.merchantId, refundEvent(settled), now);
    });
  }
  return ids.length;
}
