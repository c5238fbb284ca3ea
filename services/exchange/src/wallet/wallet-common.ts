import { Type } from 'typebox';
import { ApiError } from '../errors.js';
import type { RouteDeps } from '../http/deps.js';
import type { Wallet } from '../wallet/wallet.js';

/** `id` bodies of the details methods: int32, as the spec types them. */
export const IdBody = Type.Object({ id: Type.Integer({ minimum: 1, maximum: 2_147_483_647 }) });
export const CurrencyBody = Type.Object({ currency: Type.String({ minLength: 1, maxLength: 12 }) });

/** The wallet, or 503 when the app was built without one. */
export function walletOf(deps: RouteDeps): Wallet {
  if (!deps.wallet)
    throw new ApiError('custody_unavailable', 'deposits and withdrawals are not enabled here');
  return deps.wallet;
}

/** Support reference of a deposit or withdrawal (spec field `sn`). */
export function serialNumber(kind: 'D' | 'W', id: number): string {
  return `${kind}${String(id).padStart(9, '0')}`;
}
