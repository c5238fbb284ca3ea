import { Type } from 'typebox';
import { findAccount } from '../accounts/store.js';
import { v2Auth } from '../auth/authenticate.js';
import { ApiError } from '../errors.js';
import type { RouteDeps } from '../http/deps.js';
import { errorResponses, V2AuthQuery, v2Paths } from '../http/schemas.js';
import type { App } from '../http/typed.js';
import { balancesOf } from '../ledger/store.js';
import { formatAmountV2 } from '../money/decimal.js';

const Member = Type.Object({
  email: Type.String(),
  activated: Type.Boolean(),
  accounts: Type.Array(
    Type.Object({
      currency: Type.String({ description: 'lower case' }),
      balance: Type.String({ description: 'available funds' }),
      locked: Type.String(),
    }),
  ),
});

/** v2 `members/me`: the Peatio member object with one account per currency. */
export function v2MemberRoutes(app: App, deps: RouteDeps): void {
  for (const url of v2Paths('/api/v2/members/me')) {
    app.get(
      url,
      {
        preValidation: v2Auth(deps.auth, 'read'),
        schema: {
          tags: ['v2'],
          summary: 'Member and balances',
          querystring: Type.Object(V2AuthQuery),
          response: { 200: Member, ...errorResponses },
        },
      },
      async (request) => {
        const account = await findAccount(deps.db, request.auth!.accountId);
        if (!account) throw new ApiError('unknown_key', 'the account of this API key no longer exists');
        const balances = new Map((await balancesOf(deps.db, account.id)).map((b) => [b.currency, b]));
        return {
          email: account.email,
          activated: true,
          accounts: deps.reference.currencies.map((currency) => {
            const balance = balances.get(currency.code);
            return {
              currency: currency.code,
              balance: formatAmountV2(
                balance?.available ?? 0n,
                deps.reference.ledgerPrecision(currency.code),
              ),
              locked: formatAmountV2(balance?.locked ?? 0n, deps.reference.ledgerPrecision(currency.code)),
            };
          }),
        };
      },
    );
  }
}
