import { fromAcceptLanguage } from '@platform/checkout-look/payer-language';
import { Type } from 'typebox';
import { v3Auth } from '../auth/authenticate.js';
import { ApiError } from '../errors.js';
import { limitError, lookupError } from '../fiat/api-errors.js';
import { fiatCurrency } from '../fiat/catalogue.js';
import { createFiatDeposit } from '../fiat/deposits.js';
import type { FiatDeps } from '../fiat/deps.js';
import { invoiceFormSignature } from '../fiat/invoice-form.js';
import { requestAmount } from '../http/amounts.js';
import { errorResponses, V3AuthHeaders, v3Security } from '../http/schemas.js';
import type { App } from '../http/typed.js';
import { formatAmount } from '../money/decimal.js';

const RegularResponse = Type.Object(
  {
    deposit_id: Type.Integer({
      description:
        'the reference_id of the invoice to create at the gateway; random in 1073741824..2147483647',
    }),
    status: Type.Literal('pending'),
    currency: Type.Integer({
      description: 'internal currency id (the currency list), as in deposit details and assets history',
    }),
    amount: Type.String({
      description:
        'decimal text without trailing zeros ("500", "150.5"), as deposit details give it; assets history gives the same value as a number',
    }),
    provider: Type.String({ description: 'the gateway service the limits were checked against' }),
    reference_id: Type.String({ description: 'deposit_id as text' }),
    public_key: Type.String({ description: 'the gateway public key of the currency' }),
    paygate_url: Type.String({
      description: 'where to create the invoice (POST /public-api/payment-invoices)',
    }),
    expires: Type.Integer({
      description:
        'may be sent with the invoice (so that its create may be repeated): when the gateway stops accepting this signed form (Unix seconds)',
    }),
    signature: Type.String({
      description:
        'may be sent with the invoice (so that its create may be repeated): our signature of public_key, reference_id, currency, amount, provider (as service) and expires',
    }),
    locale: Type.Optional(
      Type.Union([Type.Literal('uk'), Type.Literal('ru'), Type.Literal('en')], {
        description:
          "send with the invoice: the hosted page's language, from this request's Accept-Language (absent when it names none of uk, ru, en)",
      }),
    ),
  },
  { description: 'a pending fiat deposit' },
);

const SimplifiedResponse = Type.Object(
  {
    action: Type.String({ description: 'URL to submit the params to as a form (the hosted payment page)' }),
    params: Type.Array(Type.Object({ name: Type.String(), value: Type.String() }), {
      description:
        'amount, reference_id, currency, service, public_key, expires, signature, and locale (uk, ru or en) when the Accept-Language of this request names one',
    }),
  },
  { description: 'the simplified deposit form' },
);

/** `POST /v3/auth/deposit`: a fiat deposit through the payment gateway (spec "Fiat deposit flow"). */
export function fiatDepositRoutes(app: App, deps: FiatDeps): void {
  app.post(
    '/v3/auth/deposit',
    {
      preValidation: v3Auth(deps.auth, 'read'),
      schema: {
        tags: ['v3 private: fiat'],
        summary: 'Create a fiat deposit',
        description:
          'Creates a pending deposit of a fiat currency (`coin: false`) after checking the amount against the ' +
          "currency's precision and the deposit service's limits (gateway payment prerequest). The client then " +
          "creates an invoice at the gateway with `reference_id` = `deposit_id`: the spec's body creates it once " +
          '(only that first create answers the page token); with `expires` and `signature` from this answer ' +
          'added, the create may be repeated. `deposit_id` is random, so nobody can guess it. ' +
          'With `payment_service: "default"` ' +
          "the answer is the simplified form `{action, params}` instead: submit it to reach the gateway's hosted " +
          'payment page. `payment_service` may also name a deposit service code. The deposit is credited once ' +
          'when the gateway reports the invoice paid.',
        security: v3Security,
        headers: V3AuthHeaders,
        body: Type.Object({
          currency: Type.String({
            minLength: 2,
            maxLength: 10,
            description: 'lower-case fiat code, e.g. uah',
          }),
          amount: Type.Union([Type.Number(), Type.String({ maxLength: 40 })]),
          payment_service: Type.Optional(
            Type.String({ minLength: 1, maxLength: 100, description: '"default" or a deposit service code' }),
          ),
        }),
        response: { 200: Type.Union([RegularResponse, SimplifiedResponse]), ...errorResponses },
      },
    },
    async (request) => {
      const { body } = request;
      const fiat = fiatCurrency(deps.reference, deps.gateway, body.currency);
      if (!fiat.ok) throw lookupError(fiat);
      const amount = requestAmount(deps.reference, fiat.currency.code, body.amount);
      if (amount <= 0n) throw new ApiError('validation_failed', 'amount must be positive');
      const service = body.payment_service === 'default' ? undefined : body.payment_service;
      const created = await createFiatDeposit(deps, {
        accountId: request.auth!.accountId,
        currency: fiat.currency,
        amount,
        ...(service ? { service } : {}),
      });
      if (!created.ok) {
        if (created.error === 'limits') throw limitError(created.check);
        if (created.failure.error === 'gateway_unavailable') {
          request.log.warn({ detail: created.failure.detail }, 'payment gateway unavailable');
        }
        throw lookupError(created.failure);
      }
      const { deposit } = created;
      const currency = fiat.currency.code.toUpperCase();
      // The hosted page in the payer's language, from the deposit request's Accept-Language (the v3
      // route has no field for it; not part of the signed form: the gateway takes it as given).
      const locale = fromAcceptLanguage(request.headers['accept-language']);
      // The gateway answers the invoice and its page token again only to a form we signed (issue 28);
      // the spec's unsigned body gets them once, from the create that made the invoice (issue 41).
      const { expires, signature } = invoiceFormSignature(
        deps.paygate.merchantSecret,
        {
          publicKey: deposit.publicKey,
          referenceId: String(deposit.id),
          currency,
          amount: deposit.amountText,
          service: deposit.service,
        },
        deps.now(),
        deps.paygate.formTtlS,
      );
      if (body.payment_service === 'default') {
        return {
          action: `${deps.paygate.url}/public-api/payment-invoices/process`,
          params: [
            { name: 'amount', value: deposit.amountText },
            { name: 'reference_id', value: String(deposit.id) },
            { name: 'currency', value: currency },
            { name: 'service', value: deposit.service },
            { name: 'public_key', value: deposit.publicKey },
            { name: 'expires', value: String(expires) },
            { name: 'signature', value: signature },
            ...(locale ? [{ name: 'locale', value: locale }] : []),
          ],
        };
      }
      // The deposit record in the one format of deposit details and assets history (README "Fiat
      // amounts"): the currency's id and the decimal text without trailing zeros. The simplified form
      // above is the gateway's parameters and keeps the gateway's format ("500.00", "UAH").
      return {
        deposit_id: deposit.id,
        status: 'pending' as const,
        currency: fiat.currency.id,
        amount: formatAmount(amount, deps.reference.ledgerPrecision(fiat.currency.code)),
        provider: deposit.service,
        reference_id: String(deposit.id),
        public_key: deposit.publicKey,
        paygate_url: deps.paygate.url,
        expires,
        signature,
        ...(locale ? { locale } : {}),
      };
    },
  );
}
