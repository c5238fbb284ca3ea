import { Type } from 'typebox';
import { v3Auth } from '../auth/authenticate.js';
import { ApiError } from '../errors.js';
import type { RouteDeps } from '../http/deps.js';
import { errorResponses, V3AuthHeaders, v3Security } from '../http/schemas.js';
import type { App } from '../http/typed.js';
import { formatAmount } from '../money/decimal.js';
import { findDeposit, publicDepositStatus } from '../wallet/deposit-store.js';
import { CurrencyBody, IdBody, serialNumber, walletOf } from './wallet-common.js';

const DepositInfo = Type.Object({
  confirmations: Type.Integer({ description: 'confirmations needed before the deposit is credited' }),
  min_deposit: Type.Number({ description: 'smaller deposits are recorded and shown, never credited' }),
  address: Type.Union([Type.String(), Type.Null()], { description: 'null until an address is generated' }),
  memo: Type.Optional(
    Type.Union([Type.String(), Type.Null()], {
      description: 'destination tag, for currencies that need one',
    }),
  ),
});

const DepositDetails = Type.Object({
  id: Type.Integer(),
  type: Type.Literal('deposit'),
  created_at: Type.String({ description: 'ISO 8601 with offset' }),
  destination: Type.String(),
  txid: Type.String(),
  currency: Type.Integer({ description: 'currency id' }),
  amount: Type.String(),
  status: Type.String({ description: 'pending, done or canceled' }),
  sn: Type.String(),
  provider: Type.Union([Type.String(), Type.Null()]),
});

/** Crypto deposit methods: address info, address generation, deposit details. */
export function depositRoutes(app: App, deps: RouteDeps): void {
  const preValidation = v3Auth(deps.auth, 'read');
  app.post(
    '/v3/auth/deposit/info',
    {
      preValidation,
      schema: {
        tags: ['v3 wallet'],
        summary: 'Deposit address info',
        security: v3Security,
        headers: V3AuthHeaders,
        body: CurrencyBody,
        response: { 200: DepositInfo, ...errorResponses },
      },
    },
    async (request) => walletOf(deps).depositInfo(request.auth!.accountId, request.body.currency),
  );
  app.post(
    '/v3/auth/payment_addresses',
    {
      preValidation,
      schema: {
        tags: ['v3 wallet'],
        summary: 'Generate a deposit address',
        security: v3Security,
        headers: V3AuthHeaders,
        body: CurrencyBody,
        response: { 200: Type.Object({ success: Type.Boolean() }), ...errorResponses },
      },
    },
    async (request) => {
      const created = await walletOf(deps).createAddress(request.auth!.accountId, request.body.currency);
      if (!created) throw new ApiError('address_exists', 'an address for this currency already exists');
      return { success: true };
    },
  );
  app.post(
    '/v3/auth/deposit/details',
    {
      preValidation,
      schema: {
        tags: ['v3 wallet'],
        summary: 'Deposit details',
        security: v3Security,
        headers: V3AuthHeaders,
        body: IdBody,
        response: { 200: DepositDetails, ...errorResponses },
      },
    },
    async (request) => {
      const deposit = await findDeposit(deps.db, request.auth!.accountId, request.body.id);
      if (!deposit) throw new ApiError('not_found', 'no such deposit');
      return {
        id: deposit.id,
        type: 'deposit' as const,
        created_at: deposit.createdAt.toISOString(),
        destination: deposit.address ?? deposit.provider ?? '',
        txid: deposit.txid ?? deposit.externalId ?? '',
        currency: deps.reference.currency(deposit.currency)?.id ?? 0,
        amount: formatAmount(deposit.amount, deps.reference.ledgerPrecision(deposit.currency)),
        status: publicDepositStatus(deposit.status),
        sn: serialNumber('D', deposit.id),
        provider: deposit.provider,
      };
    },
  );
}
