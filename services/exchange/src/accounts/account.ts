import { Type } from 'typebox';
import { findAccount } from '../accounts/store.js';
import { v3Auth } from '../auth/authenticate.js';
import { ApiError } from '../errors.js';
import type { RouteDeps } from '../http/deps.js';
import { errorResponses, V3AuthHeaders, v3Security } from '../http/schemas.js';
import type { App } from '../http/typed.js';

const AccountResponse = Type.Object({
  email: Type.String(),
  svcid: Type.String({ description: 'account id used as transfer-code recipient' }),
  two_factor: Type.Boolean(),
  withdraw_confirmation: Type.Boolean(),
  public_keys: Type.Object({
    deposit_sdk_uah_public_key: Type.String(),
    deposit_sdk_usd_public_key: Type.String(),
    deposit_sdk_rub_public_key: Type.String(),
  }),
  announcements: Type.Boolean(),
  withdraw_allowlist_only: Type.Boolean({
    description:
      'crypto withdrawals go only to unlocked entries of /v3/auth/withdraw/addresses (set by support)',
  }),
});

/** Empty JSON object body of parameterless private methods; extra fields are ignored. */
export const EmptyBody = Type.Object({}, { description: 'no parameters; sign it as {}' });

export function accountRoutes(app: App, deps: RouteDeps): void {
  app.post(
    '/v3/auth/me',
    {
      preValidation: v3Auth(deps.auth, 'read'),
      schema: {
        tags: ['v3 private'],
        summary: 'Account of the API key',
        security: v3Security,
        headers: V3AuthHeaders,
        body: EmptyBody,
        response: { 200: AccountResponse, ...errorResponses },
      },
    },
    async (request) => {
      const account = await findAccount(deps.db, request.auth!.accountId);
      if (!account) throw new ApiError('unknown_key', 'the account of this API key no longer exists');
      return {
        email: account.email,
        svcid: account.svcid,
        two_factor: account.twoFactor,
        withdraw_confirmation: account.withdrawConfirmation,
        public_keys: {
          // The exchange's merchant keys at the gateway: one per currency, the same for every account.
          deposit_sdk_uah_public_key: deps.paygate.publicKeys.uah ?? '',
          deposit_sdk_usd_public_key: deps.paygate.publicKeys.usd ?? '',
          deposit_sdk_rub_public_key: deps.paygate.publicKeys.rub ?? '',
        },
        announcements: account.announcements,
        withdraw_allowlist_only: account.withdrawAllowlistOnly,
      };
    },
  );
}
