import { Type } from 'typebox';
import { v3Auth } from '../auth/authenticate.js';
import { ApiError } from '../errors.js';
import { fieldError, lookupError } from '../fiat/api-errors.js';
import { fiatCurrency, payoutService } from '../fiat/catalogue.js';
import type { FiatDeps } from '../fiat/deps.js';
import { addFundSource, deleteFundSource, type FundSource, listFundSources } from '../fiat/fund-sources.js';
import { checkFields, FIELD_VALUE_MAX } from '../fiat/rules.js';
import { errorResponses, V3AuthHeaders, v3Security } from '../http/schemas.js';
import type { App } from '../http/typed.js';
import { formatAmount } from '../money/decimal.js';

const FundSourceSchema = Type.Object(
  {
    id: Type.Integer({ description: 'the fund_source_id of a fiat withdrawal' }),
    currency: Type.String({ description: 'lower-case fiat currency' }),
    gateway: Type.String({ description: 'gateway service code, e.g. payment_card_uah' }),
    fields: Type.Record(Type.String(), Type.String(), {
      description: 'the saved field values, masked (e.g. card_number 424242******4242)',
    }),
    label: Type.String(),
    created_at: Type.String({ description: 'ISO 8601' }),
  },
  { description: 'a saved fiat destination' },
);

const CurrencyField = Type.String({ minLength: 2, maxLength: 10, description: 'fiat currency, e.g. uah' });
// The integer form has the bound of the string form: a larger id (1e19) is a 400, not a database error.
const IdInput = Type.Union([
  Type.Integer({ minimum: 1, maximum: 999_999_999 }),
  Type.String({ pattern: '^[0-9]{1,9}$' }),
]);

function present(source: FundSource) {
  return {
    id: source.id,
    currency: source.currency,
    gateway: source.service,
    fields: { ...source.masked },
    label: source.label,
    created_at: source.createdAt.toISOString(),
  };
}

/** Saved fiat destinations: list (the SDKs' `fund_sources/list`), add and delete. */
export function fundSourceRoutes(app: App, deps: FiatDeps): void {
  const box = deps.auth.secretBox;
  app.post(
    '/v3/auth/fund_sources/list',
    {
      preValidation: v3Auth(deps.auth, 'read'),
      schema: {
        tags: ['v3 private: fiat'],
        summary: 'Saved fiat destinations of a currency',
        description: 'Field values are masked. Without `currency`, every currency.',
        security: v3Security,
        headers: V3AuthHeaders,
        body: Type.Object({ currency: Type.Optional(CurrencyField) }),
        response: { 200: Type.Array(FundSourceSchema), ...errorResponses },
      },
    },
    async (request) => {
      const currency = request.body.currency?.toLowerCase();
      return (await listFundSources(deps.db, request.auth!.accountId, currency)).map(present);
    },
  );

  app.post(
    '/v3/auth/fund_sources/add',
    {
      preValidation: v3Auth(deps.auth, 'withdraw'),
      schema: {
        tags: ['v3 private: fiat'],
        summary: 'Save a fiat destination',
        description:
          'Checks `fields` against the payout service `gateway` of the currency (its fields, their regexps and ' +
          'required flags, from the gateway payout prerequest), then stores them encrypted. Use the returned ' +
          '`id` as `fund_source_id` of `POST /v3/auth/withdraw`. Needs the `withdraw` scope.',
        security: v3Security,
        headers: V3AuthHeaders,
        body: Type.Object({
          currency: CurrencyField,
          gateway: Type.String({ minLength: 1, maxLength: 100, description: 'payout service code' }),
          fields: Type.Record(Type.String({ maxLength: 64 }), Type.String({ maxLength: FIELD_VALUE_MAX }), {
            maxProperties: 20,
            description: 'map from a service field key to its value',
          }),
          label: Type.Optional(Type.String({ maxLength: 100 })),
        }),
        response: { 200: FundSourceSchema, ...errorResponses },
      },
    },
    async (request) => {
      const { body } = request;
      const fiat = fiatCurrency(deps.reference, deps.gateway, body.currency);
      if (!fiat.ok) throw lookupError(fiat);
      // The payout prerequest needs an amount; fields do not depend on it, so ask with the smallest unit.
      const smallest = formatAmount(1n, fiat.currency.precision.real);
      const found = await payoutService(deps.gateway, fiat.currency.code, smallest, body.gateway);
      if (!found.ok) {
        if (found.error === 'gateway_unavailable')
          request.log.warn({ detail: found.detail }, 'gateway unavailable');
        throw lookupError(found);
      }
      const checked = checkFields(body.fields, found.service.fields);
      if (!checked.ok) throw fieldError(checked);
      const saved = await addFundSource(deps.db, box, {
        accountId: request.auth!.accountId,
        currency: fiat.currency.code,
        service: found.service.code,
        fields: checked.fields,
        label: body.label ?? '',
      });
      return present(saved);
    },
  );

  app.post(
    '/v3/auth/fund_sources/delete',
    {
      preValidation: v3Auth(deps.auth, 'withdraw'),
      schema: {
        tags: ['v3 private: fiat'],
        summary: 'Delete a saved fiat destination',
        security: v3Security,
        headers: V3AuthHeaders,
        body: Type.Object({ id: IdInput }),
        response: { 200: Type.Object({ success: Type.Boolean() }), ...errorResponses },
      },
    },
    async (request) => {
      const deleted = await deleteFundSource(deps.db, request.auth!.accountId, Number(request.body.id));
      if (!deleted) throw new ApiError('fund_source_not_found', 'no such fund source of this account');
      return { success: true };
    },
  );
}
