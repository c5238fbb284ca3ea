import { Type } from 'typebox';
import { supportedLocale } from '../hpp/locale.js';
import type { RouteDeps } from '../http/deps.js';
import { InvoiceSchema, invoiceJson } from '../http/format.js';
import { AmountInput, errorResponses } from '../http/schemas.js';
import type { App } from '../http/typed.js';
import { keyInTransaction } from '../idempotency/hooks.js';
import { type CreatedInvoice, createInvoice } from '../payments/invoices.js';
import { pageToken } from '../payments/page-token.js';

export const PROCESS_PATH = '/public-api/payment-invoices/process';

/** The content type of JSON answers, as Fastify sets it; stored with an idempotent answer. */
const JSON_TYPE = 'application/json; charset=utf-8';

const ActivePayment = Type.Object({
  flow: Type.Literal('hpp'),
  method: Type.Literal('POST'),
  action: Type.String({ description: 'the hosted payment page: submit the payload here as a form' }),
  payload: Type.Array(Type.Object({ name: Type.String(), value: Type.String() })),
});

const InvoiceResponse = Type.Object({
  data: Type.Object({ ...InvoiceSchema.properties, active_payment: ActivePayment }),
});

/** `POST /public-api/payment-invoices`: an invoice for a deposit and the form that opens its page. */
export function invoiceRoutes(app: App, deps: RouteDeps): void {
  app.post(
    '/public-api/payment-invoices',
    {
      schema: {
        tags: ['public'],
        summary: 'Create a payment invoice (idempotent per merchant and reference_id)',
        description:
          "With the merchant's signature of the form (`expires`, `signature`): 201 with a new invoice, or 200 " +
          'with the existing one when the same reference_id comes again with the same amount, currency and ' +
          'service (409 otherwise); a wrong signature is 401 `bad_form_signature`, an expired form ' +
          "`form_expired`. Without `expires` and `signature` (the spec's body): 201 with a new invoice for a " +
          'reference that has none; for a reference that has an invoice 401 `bad_form_signature`, whatever ' +
          'the parameters (its token is answered only once, or to the signed form); at most ' +
          'UNSIGNED_INVOICES_PER_ADDRESS such creates per client address and window (429 `rate_limited`, ' +
          '`retry-after`); and never with an `Idempotency-Key` (401 before any lookup: keys are the ' +
          "merchant's). `active_payment.payload` is submitted as a form to `active_payment.action` to open " +
          'the hosted payment page.',
        body: Type.Object({
          public_key: Type.String({ minLength: 1, maxLength: 128 }),
          reference_id: Type.String({ minLength: 1, maxLength: 64 }),
          description: Type.Optional(Type.String({ maxLength: 500 })),
          service: Type.String({ minLength: 1, maxLength: 64, description: 'service code, or "default"' }),
          service_fields: Type.Optional(
            Type.Record(Type.String(), Type.Union([Type.String(), Type.Number(), Type.Null()])),
          ),
          currency: Type.String({ minLength: 3, maxLength: 3, description: 'either case' }),
          amount: AmountInput,
          locale: Type.Optional(
            Type.String({
              pattern: '^(en|uk|ru)([-_][A-Za-z0-9]{1,8})*$',
              description:
                "the hosted page's language: en, uk or ru (a region such as uk-UA is accepted); without it the payer's Accept-Language decides",
            }),
          ),
          expires: Type.Optional(
            Type.Union([Type.Integer(), Type.String({ maxLength: 16 })], {
              description: "the form's expiry (Unix seconds) as the merchant signed it",
            }),
          ),
          signature: Type.Optional(
            Type.String({
              maxLength: 128,
              description:
                'the merchant\'s signature of the form (README "Signed invoice forms"); without it and `expires`, an unsigned create (README "Unsigned invoices")',
            }),
          ),
        }),
        response: { 200: InvoiceResponse, 201: InvoiceResponse, ...errorResponses },
      },
    },
    async (request, reply) => {
      const body = request.body;
      const answerOf = ({ invoice, merchant }: CreatedInvoice) => ({
        data: {
          ...invoiceJson(invoice),
          active_payment: {
            flow: 'hpp' as const,
            method: 'POST' as const,
            action: `${deps.publicUrl}${PROCESS_PATH}`,
            payload: [
              { name: 'invoice_id', value: invoice.id },
              { name: 'token', value: pageToken(merchant.secret, invoice.id) },
            ],
          },
        },
      });
      // Under an Idempotency-Key the key is taken and the answer stored in the invoice's own
      // transaction (one commit instead of three, README "Bench"); the answer is sent as stored.
      const key = keyInTransaction(request);
      let stored: string | undefined;
      let outcome: CreatedInvoice;
      try {
        outcome = await createInvoice(
          deps,
          {
            publicKey: body.public_key,
            referenceId: body.reference_id,
            description: body.description ?? '',
            service: body.service,
            serviceFields: body.service_fields ?? {},
            currency: body.currency,
            amount: body.amount,
            locale: supportedLocale(body.locale),
            formSignature: { expires: body.expires, signature: body.signature },
            unsignedAllowed: true,
            clientAddress: request.ip,
          },
          key && {
            proven: (merchantId) => key.proven(merchantId),
            after: async (tx, created) => {
              stored = JSON.stringify(answerOf(created));
              await key.store(tx, {
                status: created.created ? 201 : 200,
                body: stored,
                contentType: JSON_TYPE,
              });
            },
          },
        );
      } catch (error) {
        // The key was not looked at first: a failed route, or one that found its key taken (and
        // rolled back), answers what the key holds when it holds something.
        const answered = key && (await key.answerTaken(reply, error));
        if (answered) return answered;
        throw error;
      }
      reply.status(outcome.created ? 201 : 200);
      if (stored !== undefined) return reply.type(JSON_TYPE).send(stored);
      return reply.send(answerOf(outcome));
    },
  );
}
