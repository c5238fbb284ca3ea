import { Type } from 'typebox';
import { paymentPrerequest, payoutPrerequest } from '../catalog/prerequest.js';
import { parseAmount } from '../domain/money.js';
import { ApiError } from '../errors.js';
import type { RouteDeps } from '../http/deps.js';
import { AmountInput, errorResponses } from '../http/schemas.js';
import type { App } from '../http/typed.js';
import { merchantOfKey } from '../payments/invoices.js';

const Currency = Type.String({ minLength: 3, maxLength: 3, description: 'currency code, e.g. UAH' });
const PublicKey = Type.String({
  minLength: 1,
  maxLength: 128,
  description: "the merchant's public key of that currency",
});

// The response is documented loosely: services and methods are maps keyed by code.
const PrerequestResponse = Type.Object(
  {
    data: Type.Object(
      {
        currency: Type.String(),
        amount: Type.Optional(Type.Number({ description: 'payout only' })),
        test_mode: Type.Boolean(),
        services: Type.Record(Type.String(), Type.Unknown()),
        methods: Type.Record(Type.String(), Type.Unknown()),
        account: Type.Object({
          name: Type.String(),
          description: Type.String(),
          icon: Type.String(),
          website: Type.String(),
        }),
      },
      { additionalProperties: true },
    ),
  },
  { description: 'the gateway prerequest response (spec "Gateway prerequest response")' },
);

/** `POST /public-api/payment-prerequest` and `/payout-prerequest`: the services open to a public key. */
export function prerequestRoutes(app: App, deps: RouteDeps): void {
  app.post(
    '/public-api/payment-prerequest',
    {
      schema: {
        tags: ['public'],
        summary: 'Deposit services, fields, limits and fees for a public key',
        body: Type.Object({ currency: Currency, public_key: PublicKey }),
        response: { 200: PrerequestResponse, ...errorResponses },
      },
    },
    async (request) => {
      const { merchant, currency } = merchantOfKey(deps, request.body.public_key, request.body.currency);
      return paymentPrerequest(deps.catalog, merchant, currency, deps.publicUrl);
    },
  );

  app.post(
    '/public-api/payout-prerequest',
    {
      schema: {
        tags: ['public'],
        summary: 'Payout services, fields, limits and fees for an amount',
        body: Type.Object({ amount: AmountInput, currency: Currency, public_key: PublicKey }),
        response: { 200: PrerequestResponse, ...errorResponses },
      },
    },
    async (request) => {
      const { merchant, currency } = merchantOfKey(deps, request.body.public_key, request.body.currency);
      const parsed = parseAmount(request.body.amount, deps.catalog.precision.get(currency) ?? 2);
      if (!parsed.ok)
        throw new ApiError('invalid_amount', `amount is not a valid amount (${parsed.reason})`, 'amount');
      return payoutPrerequest(deps.catalog, merchant, currency, parsed.minor, deps.publicUrl);
    },
  );
}
