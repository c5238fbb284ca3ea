import { Type } from 'typebox';
import { EmptyBody } from '../accounts/account.js';
import { v3Auth } from '../auth/authenticate.js';
import type { RouteDeps } from '../http/deps.js';
import { errorResponses, V3AuthHeaders, v3Security } from '../http/schemas.js';
import type { App } from '../http/typed.js';
import { balancesOf } from '../ledger/store.js';
import { amountToNumber } from '../money/decimal.js';

const Wallet = Type.Tuple(
  [
    Type.String({ description: 'wallet type: exchange' }),
    Type.String({ description: 'currency symbol, upper case' }),
    Type.Number({ description: 'total balance (available + locked)' }),
    Type.Null(),
    Type.Number({ description: 'available funds' }),
  ],
  { description: 'wallet, e.g. ["exchange", "USD", 1208370, null, 1208370]' },
);

/** One wallet per reference currency, in currency order, zero when never funded. */
export function walletRoutes(app: App, deps: RouteDeps): void {
  app.post(
    '/v3/auth/r/wallets',
    {
      preValidation: v3Auth(deps.auth, 'read'),
      schema: {
        tags: ['v3 private'],
        summary: 'Balances',
        security: v3Security,
        headers: V3AuthHeaders,
        body: EmptyBody,
        response: { 200: Type.Array(Wallet), ...errorResponses },
      },
    },
    async (request) => {
      const balances = new Map(
        (await balancesOf(deps.db, request.auth!.accountId)).map((b) => [b.currency, b]),
      );
      return deps.reference.currencies.map((currency) => {
        const balance = balances.get(currency.code);
        const available = balance?.available ?? 0n;
        const total = available + (balance?.locked ?? 0n);
        const precision = deps.reference.ledgerPrecision(currency.code);
        return [
          'exchange',
          currency.code.toUpperCase(),
          amountToNumber(total, precision),
          null,
          amountToNumber(available, precision),
        ] as [string, string, number, null, number];
      });
    },
  );
}
