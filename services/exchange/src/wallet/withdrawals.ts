import { Type } from 'typebox';
import { v3Auth } from '../auth/authenticate.js';
import { ApiError } from '../errors.js';
import type { RouteDeps } from '../http/deps.js';
import { errorResponses, V3AuthHeaders, v3Security } from '../http/schemas.js';
import type { App } from '../http/typed.js';
import { formatAmount } from '../money/decimal.js';
import { findWithdrawal, publicWithdrawalStatus } from '../wallet/withdrawal-store.js';
import { IdBody, serialNumber, walletOf } from './wallet-common.js';

const WithdrawBodySchema = Type.Object({
  withdraw_type: Type.String({ minLength: 1, maxLength: 12, description: 'currency code, lower case' }),
  amount: Type.Union([Type.Number(), Type.String({ maxLength: 64 })], {
    description: 'by default the fee is added on top; with withdrawall it is taken from this amount',
  }),
  address: Type.Optional(Type.String({ maxLength: 256 })),
  gateway: Type.Optional(Type.String({ maxLength: 64 })),
  fields: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  // An id the fund_sources integer column can hold: a larger JSON integer is 400, never a failed query (500).
  fund_source_id: Type.Optional(Type.Integer({ minimum: 1, maximum: 2_147_483_647 })),
  payment_id: Type.Optional(Type.String({ maxLength: 128 })),
  allow_blank_memo: Type.Optional(Type.Boolean()),
  withdrawall: Type.Optional(Type.Union([Type.Boolean(), Type.Literal(0), Type.Literal(1)])),
});

const WithdrawResult = Type.Array(
  Type.Object({ status: Type.String(), message: Type.String(), withdrawal_id: Type.Integer() }),
);

const WithdrawalDetails = Type.Object({
  id: Type.Integer(),
  created_at: Type.String(),
  destination: Type.String(),
  currency: Type.String(),
  amount: Type.String({ description: 'what the recipient gets' }),
  status: Type.String({ description: 'awaiting_confirmation, pending, done or canceled' }),
  txid: Type.String(),
  sn: Type.String(),
  fee: Type.String(),
  total_amount: Type.String({ description: 'debited from the balance (in the withdrawal currency)' }),
  reference_id: Type.String(),
});

/** Withdrawal request (crypto here; fiat through `deps.fiatWithdrawals`) and its details. */
export function withdrawalRoutes(app: App, deps: RouteDeps): void {
  app.post(
    '/v3/auth/withdraw',
    {
      // `withdraw_allowlisted` instead of `withdraw`: crypto to unlocked address book entries only.
      preValidation: v3Auth(deps.auth, ['withdraw', 'withdraw_allowlisted']),
      schema: {
        tags: ['v3 wallet'],
        summary: 'Request a withdrawal',
        description:
          'Scope withdraw, or withdraw_allowlisted (crypto only, to confirmed and unlocked entries of ' +
          '/v3/auth/withdraw/addresses). An account with withdraw_allowlist_only sends crypto only to ' +
          'such entries with any key. Elsewhere: 403 address_not_allowlisted, or address_locked with usable_at.',
        security: v3Security,
        headers: V3AuthHeaders,
        body: WithdrawBodySchema,
        response: { 200: WithdrawResult, ...errorResponses },
      },
    },
    async (request) => {
      const body = request.body;
      const currency = deps.reference.currency(body.withdraw_type);
      if (!currency) throw new ApiError('unknown_currency', `unknown currency "${body.withdraw_type}"`);
      const keyRestricted = !request.auth!.scopes.includes('withdraw');
      if (!currency.coin) {
        // Fiat payouts have no address book: a restricted key could send them to any card.
        if (keyRestricted) {
          throw new ApiError(
            'scope_missing',
            'a withdraw_allowlisted key cannot withdraw fiat; use a withdraw key',
          );
        }
        if (!deps.fiatWithdrawals)
          throw new ApiError('fiat_unavailable', 'fiat withdrawals are not enabled here');
        return deps.fiatWithdrawals.withdraw(request.auth!.accountId, body);
      }
      return walletOf(deps).withdraw(request.auth!.accountId, body, { keyRestricted });
    },
  );
  app.post(
    '/v3/auth/withdraw/details',
    {
      preValidation: v3Auth(deps.auth, 'read'),
      schema: {
        tags: ['v3 wallet'],
        summary: 'Withdrawal details',
        security: v3Security,
        headers: V3AuthHeaders,
        body: IdBody,
        response: { 200: WithdrawalDetails, ...errorResponses },
      },
    },
    async (request) => {
      const w = await findWithdrawal(deps.db, request.auth!.accountId, request.body.id);
      if (!w) throw new ApiError('not_found', 'no such withdrawal');
      const precision = deps.reference.ledgerPrecision(w.currency);
      return {
        id: w.id,
        created_at: w.createdAt.toISOString(),
        destination: w.destination,
        currency: w.currency,
        amount: formatAmount(w.amount, precision),
        status: publicWithdrawalStatus(w.status),
        txid: w.externalId ?? '',
        sn: serialNumber('W', w.id),
        fee: formatAmount(w.fee, deps.reference.ledgerPrecision(w.feeCurrency)),
        total_amount: formatAmount(w.totalAmount, precision),
        reference_id: w.referenceId,
      };
    },
  );
}
