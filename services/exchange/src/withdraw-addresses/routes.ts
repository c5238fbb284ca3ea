import { Type } from 'typebox';
import { v3Auth } from '../auth/authenticate.js';
import { ApiError, type ErrorName } from '../errors.js';
import type { RouteDeps } from '../http/deps.js';
import { errorResponses, V3AuthHeaders, v3Security } from '../http/schemas.js';
import type { App } from '../http/typed.js';
import { IdBody, walletOf } from '../wallet/wallet-common.js';
import { checkLabel, MAX_LABEL_LENGTH, memoKey } from './rules.js';
import type { AddressError, AddressFailure, WithdrawAddresses } from './service.js';
import { entryObject } from './view.js';

const EntrySchema = Type.Object(
  {
    id: Type.Integer(),
    currency: Type.String({ description: 'lower case' }),
    address: Type.String({
      description: 'as given (trimmed); withdrawals match it the way the custody reads addresses',
    }),
    payment_id: Type.Union([Type.String(), Type.Null()], {
      description: 'destination tag (xrp): a withdrawal matches only with the same one; null for none',
    }),
    label: Type.String(),
    status: Type.String({
      description:
        'awaiting_confirmation (the e-mailed link), locked (until usable_at), active (usable); ' +
        'deleted, revoked, canceled, expired once ended',
    }),
    created_at: Type.String(),
    usable_at: Type.Union([Type.String(), Type.Null()], {
      description: 'ISO 8601: WITHDRAW_ADDRESS_LOCK_S after the confirmation; null until confirmed',
    }),
    ended_at: Type.Union([Type.String(), Type.Null()], {
      description: 'ISO 8601: when it was deleted, revoked, canceled or expired; null while live',
    }),
  },
  { description: 'withdrawal address book entry' },
);

const ERROR_OF: Record<AddressError, ErrorName> = {
  exists: 'withdraw_address_exists',
  limit: 'validation_failed',
  not_found: 'not_found',
  mail_failed: 'unavailable',
  state: 'not_found',
};

function refuse(failure: AddressFailure): never {
  throw new ApiError(ERROR_OF[failure.error], failure.detail);
}

/**
 * The address book of the caller's account. Adding and deleting need the `withdraw` scope: a key
 * with `withdraw_allowlisted` may use the book but never change it (a stolen one could otherwise add
 * its own address). Listing needs `read`.
 */
export function withdrawAddressRoutes(app: App, deps: RouteDeps, book: WithdrawAddresses): void {
  const signed = {
    tags: ['v3 wallet'],
    security: v3Security,
    headers: V3AuthHeaders,
  };

  app.post(
    '/v3/auth/withdraw/addresses',
    {
      preValidation: v3Auth(deps.auth, 'withdraw'),
      schema: {
        ...signed,
        summary: 'Add a withdrawal address to the address book (time-locked)',
        description:
          'Scope withdraw. Confirmed by an e-mailed link when the account confirms withdrawals by mail ' +
          '(status awaiting_confirmation), otherwise at once (the owner gets a notice mail); usable ' +
          'WITHDRAW_ADDRESS_LOCK_S (default 86400) after the confirmation. 409 withdraw_address_exists ' +
          'for a destination already listed.',
        body: Type.Object({
          currency: Type.String({ minLength: 1, maxLength: 12, description: 'coin code, any case' }),
          address: Type.String({ minLength: 1, maxLength: 256 }),
          label: Type.Optional(
            Type.String({ maxLength: 4 * MAX_LABEL_LENGTH, description: 'up to 100 characters' }),
          ),
          payment_id: Type.Optional(
            Type.String({ maxLength: 128, description: 'memo / destination tag (xrp)' }),
          ),
        }),
        response: { 200: EntrySchema, ...errorResponses },
      },
    },
    async (request) => {
      const body = request.body;
      const currency = deps.reference.currency(body.currency.trim());
      if (!currency) throw new ApiError('unknown_currency', `unknown currency "${body.currency}"`);
      if (!currency.coin) throw new ApiError('not_a_coin', `${currency.code} is not a cryptocurrency`);
      const memo = memoKey(currency.code, currency.has_memo, body.payment_id);
      if (!memo.ok) throw new ApiError('invalid_memo', memo.detail);
      const label = checkLabel(body.label);
      if (!label.ok) throw new ApiError('validation_failed', label.detail);
      const address = body.address.trim();
      const addressKey =
        address === '' ? undefined : await walletOf(deps).canonicalAddress(currency.code, address);
      if (addressKey === undefined) {
        throw new ApiError('invalid_address', `"${address}" is not a valid ${currency.code} address`);
      }
      const outcome = await book.add(request.auth!.accountId, {
        currency: currency.code,
        address,
        addressKey,
        memo: memo.value,
        label: label.value,
      });
      if (!outcome.ok) refuse(outcome);
      return entryObject(outcome.entry, deps.now());
    },
  );

  app.post(
    '/v3/auth/withdraw/addresses/list',
    {
      preValidation: v3Auth(deps.auth, 'read'),
      schema: {
        ...signed,
        summary: 'The address book: live entries, newest first (with include_ended, ended ones too)',
        body: Type.Object({
          currency: Type.Optional(
            Type.String({ minLength: 1, maxLength: 12, description: 'only this coin' }),
          ),
          include_ended: Type.Optional(
            Type.Boolean({
              description:
                'also the entries that ended (deleted, revoked, canceled, expired): who removed an address, and when; at most 1,000 rows',
            }),
          ),
        }),
        response: { 200: Type.Array(EntrySchema), ...errorResponses },
      },
    },
    async (request) => {
      const code = request.body.currency?.trim();
      const currency = code === undefined ? undefined : deps.reference.currency(code);
      if (code !== undefined && !currency)
        throw new ApiError('unknown_currency', `unknown currency "${code}"`);
      const now = deps.now();
      const entries = await book.list(
        request.auth!.accountId,
        currency?.code,
        request.body.include_ended === true,
      );
      return entries.map((entry) => entryObject(entry, now));
    },
  );

  app.post(
    '/v3/auth/withdraw/addresses/delete',
    {
      preValidation: v3Auth(deps.auth, 'withdraw'),
      schema: {
        ...signed,
        summary: 'Delete an address book entry (at once; its unsent withdrawals are cancelled)',
        description:
          'Scope withdraw. From this answer on no withdrawal can use the entry; withdrawals it allowed ' +
          'that were still awaiting confirmation or queued are cancelled and their funds released.',
        body: IdBody,
        response: { 200: EntrySchema, ...errorResponses },
      },
    },
    async (request) => {
      const outcome = await book.end(request.body.id, 'delete', request.auth!.accountId);
      if (!outcome.ok) refuse(outcome);
      return entryObject(outcome.entry, deps.now());
    },
  );
}
