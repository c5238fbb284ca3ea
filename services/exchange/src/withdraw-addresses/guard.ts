import { ApiError } from '../errors.js';
import type { DestinationGuard } from '../wallet/wallet.js';
import type { WithdrawAddresses } from './service.js';

/**
 * The wallet's check of restricted withdrawals (src/wallet/wallet.ts `DestinationGuard`): the entry's
 * verdict as the API's refusal, `address_locked` with `usable_at`.
 */
export function addressBookGuard(book: WithdrawAddresses): DestinationGuard {
  return {
    async allow(tx, destination) {
      const { entry, verdict } = await book.verdict(tx, destination);
      if (verdict.ok && entry) return entry.id;
      if (!verdict.ok && verdict.refusal === 'locked') {
        const at = new Date(verdict.usableAt).toISOString();
        throw new ApiError(
          'address_locked',
          `this address is in the address book but usable only from ${at}`,
          {
            usable_at: at,
          },
        );
      }
      const why = verdict.ok ? 'the address is not in the address book' : verdict.detail;
      throw new ApiError(
        'address_not_allowlisted',
        `${why}: this key or account withdraws only to confirmed, unlocked addresses of /v3/auth/withdraw/addresses`,
      );
    },
  };
}
