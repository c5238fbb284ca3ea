import { Type } from 'typebox';
import { ApiError } from '../errors.js';
import type { RouteDeps } from '../http/deps.js';
import { merchantAuth } from '../http/merchant-auth.js';
import { AmountInput, errorResponses } from '../http/schemas.js';
import type { App } from '../http/typed.js';
import { createRefund } from './refunds.js';
import { findRefundByReference, type Refund } from './store.js';

export const RefundSchema = Type.Object({
  id: Type.String(),
  reference_id: Type.String(),
  invoice_id: Type.String(),
  invoice_reference_id: Type.String(),
  status: Type.String({ description: 'processing | success | failed' }),
  currency: Type.String(),
  amount: Type.String(),
  failure_reason: Type.Union([Type.String(), Type.Null()]),
  test_mode: Type.Boolean(),
  created_at: Type.String(),
  updated_at: Type.String(),
});

export function refundJson(refund: Refund) {
  return {
    id: refund.id,
    reference_id: refund.referenceId,
    invoice_id: refund.invoiceId,
    invoice_reference_id: refund.invoiceReferenceId,
    status: refund.status,
    currency: refund.currency,
    amount: refund.amount,
    failure_reason: refund.failureReason,
    test_mode: refund.testMode,
    created_at: refund.createdAt.toISOString(),
    updated_at: refund.updatedAt.toISOString(),
  };
}

const security = [{ paygateMerchant: [], paygateTimestamp: [], paygateSignature: [] }];
const Reference = Type.String({ minLength: 1, maxLength: 64 });

/** `POST /merchant-api/refunds` and `/merchant-api/refunds/status`, signed like the payout routes. */
export function refundRoutes(app: App, deps: RouteDeps): void {
  const preValidation = merchantAuth(deps);
  app.post(
    '/merchant-api/refunds',
    {
      preValidation,
      schema: {
        tags: ['merchant'],
        summary: 'Refund all or part of a paid invoice (idempotent per merchant and reference_id)',
        description:
          'Never more than the invoice amount in total across its refunds (failed ones excepted). 201 for a ' +
          'new refund, 200 for a repeated reference_id with the same invoice and amount, 409 otherwise.',
        security,
        body: Type.Object({
          reference_id: Reference,
          invoice_reference_id: Reference,
          amount: AmountInput,
        }),
        response: {
          200: Type.Object({ data: RefundSchema }),
          201: Type.Object({ data: RefundSchema }),
          ...errorResponses,
        },
      },
    },
    async (request, reply) => {
      if (!request.merchant) throw new ApiError('unknown_merchant', 'the request is not signed');
      const { refund, created } = await createRefund(deps, request.merchant, {
        referenceId: request.body.reference_id,
        invoiceReferenceId: request.body.invoice_reference_id,
        amount: request.body.amount,
      });
      return reply.status(created ? 201 : 200).send({ data: refundJson(refund) });
    },
  );
  app.post(
    '/merchant-api/refunds/status',
    {
      preValidation,
      schema: {
        tags: ['merchant'],
        summary: 'A refund by reference_id',
        security,
        body: Type.Object({ reference_id: Reference }),
        response: { 200: Type.Object({ data: RefundSchema }), ...errorResponses },
      },
    },
    async (request) => {
      if (!request.merchant) throw new ApiError('unknown_merchant', 'the request is not signed');
      const refund = await findRefundByReference(deps.db, request.merchant.id, request.body.reference_id);
      if (!refund) throw new ApiError('refund_not_found', 'no refund with this reference_id', 'reference_id');
      return { data: refundJson(refund) };
    },
  );
}
