import { Type } from 'typebox';
import { ApiError } from '../errors.js';
import type { RouteDeps } from '../http/deps.js';
import { InvoiceSchema, invoiceJson, PayoutSchema, payoutJson } from '../http/format.js';
import { merchantAuth } from '../http/merchant-auth.js';
import { AmountInput, errorResponses } from '../http/schemas.js';
import type { App } from '../http/typed.js';
import { createPayout } from '../payments/payouts.js';
import { findInvoiceByReference } from '../store/invoices.js';
import { findPayoutByReference } from '../store/payouts.js';

const SignedHeaders = Type.Object({
  'x-paygate-merchant': Type.Optional(Type.String({ description: 'merchant id' })),
  'x-paygate-timestamp': Type.Optional(
    Type.String({ description: 'Unix seconds, within 300 s of the gateway clock' }),
  ),
  'x-paygate-signature': Type.Optional(
    Type.String({ description: 'hex(HMAC-SHA256(merchant secret, "<timestamp>.<raw body>"))' }),
  ),
});
const security = [{ paygateMerchant: [], paygateTimestamp: [], paygateSignature: [] }];
const ByReference = Type.Object({ reference_id: Type.String({ minLength: 1, maxLength: 64 }) });

/** The merchant API: payouts and status lookups, signed with the merchant's secret. */
export function merchantRoutes(app: App, deps: RouteDeps): void {
  // Before body validation, so an unsigned request is refused as such rather than for its shape.
  const preValidation = merchantAuth(deps);
  const merchantOf = (request: { merchant?: import('../catalog/catalog.js').Merchant }) => {
    if (!request.merchant) throw new ApiError('unknown_merchant', 'the request is not signed');
    return request.merchant;
  };

  app.post(
    '/merchant-api/payouts',
    {
      preValidation,
      schema: {
        tags: ['merchant'],
        summary: 'Send a payout (idempotent per merchant and reference_id)',
        description:
          'The fields are checked against the service (regexp, required, Luhn for card numbers) and the ' +
          'amount against its limits before anything is sent. 201 for a new payout, 200 for a repeat.',
        security,
        headers: SignedHeaders,
        body: Type.Object({
          reference_id: Type.String({ minLength: 1, maxLength: 64 }),
          service: Type.String({ minLength: 1, maxLength: 64 }),
          currency: Type.String({ minLength: 3, maxLength: 3 }),
          amount: AmountInput,
          fields: Type.Record(Type.String(), Type.Union([Type.String(), Type.Number(), Type.Null()])),
        }),
        response: {
          200: Type.Object({ data: PayoutSchema }),
          201: Type.Object({ data: PayoutSchema }),
          ...errorResponses,
        },
      },
    },
    async (request, reply) => {
      const body = request.body;
      const { payout, created } = await createPayout(deps, merchantOf(request), {
        referenceId: body.reference_id,
        service: body.service,
        currency: body.currency,
        amount: body.amount,
        fields: body.fields,
      });
      return reply.status(created ? 201 : 200).send({ data: payoutJson(payout) });
    },
  );

  app.post(
    '/merchant-api/payouts/status',
    {
      preValidation,
      schema: {
        tags: ['merchant'],
        summary: 'A payout by reference_id',
        security,
        headers: SignedHeaders,
        body: ByReference,
        response: { 200: Type.Object({ data: PayoutSchema }), ...errorResponses },
      },
    },
    async (request) => {
      const payout = await findPayoutByReference(deps.db, merchantOf(request).id, request.body.reference_id);
      if (!payout) throw new ApiError('payout_not_found', 'no payout with this reference_id', 'reference_id');
      return { data: payoutJson(payout) };
    },
  );

  app.post(
    '/merchant-api/invoices/status',
    {
      preValidation,
      schema: {
        tags: ['merchant'],
        summary: 'An invoice by reference_id',
        security,
        headers: SignedHeaders,
        body: ByReference,
        response: { 200: Type.Object({ data: InvoiceSchema }), ...errorResponses },
      },
    },
    async (request) => {
      const invoice = await findInvoiceByReference(
        deps.db,
        merchantOf(request).id,
        request.body.reference_id,
      );
      if (!invoice)
        throw new ApiError('invoice_not_found', 'no invoice with this reference_id', 'reference_id');
      return { data: invoiceJson(invoice) };
    },
  );
}
