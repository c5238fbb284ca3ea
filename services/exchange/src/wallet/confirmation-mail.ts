/**
 * The withdrawal confirmation mail: single-use, expiring confirm and cancel links (src/mail/links.ts,
 * purpose 'withdrawal') issued in the transaction that creates the request, mailed after it commits.
 */
import type { Sql } from '../db/database.js';
import type { ActionLinks } from '../mail/links.js';
import type { Mailer } from '../mail/mailer.js';
import { formatAmount } from '../money/decimal.js';
import type { ReferenceData } from '../reference/load.js';
import type { WithdrawalConfirmation } from './wallet.js';
import { setConfirmExpiry, type Withdrawal } from './withdrawal-store.js';

export const WITHDRAWAL_LINK_PURPOSE = 'withdrawal';

export function mailConfirmation(
  links: ActionLinks,
  mailer: Mailer,
  reference: ReferenceData,
): WithdrawalConfirmation {
  return {
    async prepare(tx: Sql, withdrawal: Withdrawal, email: string) {
      const issued = await links.issue(tx, {
        purpose: WITHDRAWAL_LINK_PURPOSE,
        subjectId: withdrawal.id,
        accountId: withdrawal.accountId,
      });
      await setConfirmExpiry(tx, withdrawal.id, issued.expiresAt);
      const code = withdrawal.currency.toUpperCase();
      const amount = formatAmount(withdrawal.amount, reference.ledgerPrecision(withdrawal.currency));
      const fee = formatAmount(withdrawal.fee, reference.ledgerPrecision(withdrawal.feeCurrency));
      const lines = [
        `A withdrawal of ${amount} ${code} to ${withdrawal.destination}${withdrawal.memo ? ` (memo ${withdrawal.memo})` : ''} was requested (request ${withdrawal.id}, fee ${fee} ${withdrawal.feeCurrency.toUpperCase()}).`,
        '',
        `Confirm it: ${issued.confirmUrl}`,
        `Cancel it: ${issued.cancelUrl}`,
        '',
        `The links work once and expire at ${issued.expiresAt.toISOString()}; the request is then cancelled and the funds released.`,
        'If you did not ask for this withdrawal, cancel it and change your API keys.',
      ];
      return {
        expiresAt: issued.expiresAt,
        deliver: () =>
          mailer.send({
            to: email,
            subject: `Confirm your withdrawal of ${amount} ${code} (request ${withdrawal.id})`,
            text: lines.join('\n'),
          }),
      };
    },
  };
}
