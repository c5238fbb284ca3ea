import { Type } from 'typebox';
import { ApiError } from '../errors.js';
import { applyCallback } from '../fiat/callbacks.js';
import type { FiatDeps } from '../fiat/deps.js';
import { CallbackBody } from '../fiat/gateway-types.js';
import { MERCHANT_HEADER, SIGNATURE_HEADER, TIMESTAMP_HEADER, verifyPaygate } from '../fiat/signature.js';
import { errorResponses } from '../http/schemas.js';
import type { App } from '../http/typed.js';

const CallbackHeaders = Type.Object({
  [MERCHANT_HEADER]: Type.Optional(Type.String({ description: 'our merchant id at the gateway' })),
  [TIMESTAMP_HEADER]: Type.Optional(Type.String({ description: 'Unix seconds of this delivery attempt' })),
  [SIGNATURE_HEADER]: Type.Optional(
    Type.String({ description: 'hex(HMAC-SHA256(merchant secret, "<timestamp>.<raw body>"))' }),
  ),
});

/** The payment gateway's callbacks: invoice and payout status changes, signed with the merchant secret. */
export function paygateCallbackRoutes(app: App, deps: FiatDeps): void {
  app.post(
    '/v3/paygate/callback',
    {
      // The signature is checked before the body is looked at: a forged caller learns nothing.
      preValidation: async (request) => {
        const check = verifyPaygate(
          { headers: request.headers, rawBody: request.rawBody ?? Buffer.alloc(0) },
          {
            merchantId: deps.paygate.merchantId,
            secret: deps.paygate.merchantSecret,
            previousSecret: deps.paygate.previousMerchantSecret,
            nowMs: deps.now(),
            windowS: deps.paygate.callbackWindowS,
          },
        );
        if (!check.ok) throw new ApiError('callback_refused', check.detail);
      },
      schema: {
        tags: ['payment gateway'],
        summary: 'Callback of the payment gateway',
        description:
          'Called by the gateway (not by API clients) for every change of an invoice (a fiat deposit, ' +
          '`reference_id` = deposit id) or a payout (a fiat withdrawal, `reference_id` = withdrawal id). ' +
          `Signed: headers ${MERCHANT_HEADER}, ${TIMESTAMP_HEADER} (Unix seconds, within PAYGATE_CALLBACK_WINDOW_S ` +
          `of our clock) and ${SIGNATURE_HEADER} over the raw body; otherwise 401 callback_refused. ` +
          'Idempotent per object, id and event: a redelivered event is acknowledged (200) and not applied again. ' +
          'Invoice `success` credits the deposit once (its amount and currency must match, else 409 ' +
          'callback_mismatch); `failed`/`expired` cancel it. An invoice that is not a deposit of ours (an ' +
          "unknown reference, or another amount or currency: anyone can create one with the spec's unsigned " +
          'body) is acknowledged with outcome `ignored` and changes nothing, except when paid: 404 ' +
          'unknown_reference or 409 callback_mismatch, for an operator. Payout `success` settles the ' +
          'withdrawal (done), `failed` releases its locked funds; an unknown payout reference answers 404 ' +
          'unknown_reference.',
        headers: CallbackHeaders,
        body: CallbackBody,
        response: {
          200: Type.Object({
            received: Type.Literal(true),
            outcome: Type.String({
              description:
                'credited, canceled, settled, released, recorded, ignored (an invoice that is not one of our deposits), unsolicited (a refund we did not start), or duplicate (seen before)',
            }),
          }),
          ...errorResponses,
        },
      },
    },
    async (request) => {
      let event = request.body;
      if (event.object === 'payout' && event.status === 'failed' && !event.failure_reason) {
        // The callback may not say why; the payout's status does (best effort, for the owner's details).
        const payout = await deps.gateway.payoutStatus(event.reference_id);
        if (payout.ok && payout.value.failure_reason)
          event = { ...event, failure_reason: payout.value.failure_reason };
      }
      const result = await applyCallback(deps.db, deps.reference, event);
      if (!result.ok) {
        request.log.warn({ event: request.body, error: result.error }, result.message);
        throw new ApiError(result.error, result.message);
      }
      request.log.info(
        { object: request.body.object, reference: request.body.reference_id, status: request.body.status },
        `paygate callback ${result.outcome}`,
      );
      return { received: true as const, outcome: result.outcome };
    },
  );
}
