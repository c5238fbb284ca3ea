import { randomBytes } from 'node:crypto';
import { findAccount } from '../accounts/store.js';
import type { SecretBox } from '../crypto/secret-box.js';
import { ApiError } from '../errors.js';
import { requestAmount } from '../http/amounts.js';
import type { FiatWithdrawals, WithdrawBody, WithdrawResultItem } from '../wallet/fiat-port.js';
import { FundsRefused } from '../wallet/post.js';
import type { WithdrawalConfirmation } from '../wallet/wallet.js';
import { createWithdrawal, type Withdrawal } from '../wallet/withdrawal-store.js';
import { gatewayText, ledgerToReal, realToLedger } from './amounts.js';
import { fieldError, limitError, lookupError } from './api-errors.js';
import { fiatCurrency, payoutService } from './catalogue.js';
import type { FiatDeps } from './deps.js';
import { openFundSource } from './fund-sources.js';
import {
  checkCardNumbers,
  checkFields,
  checkLimits,
  describeDestination,
  feeRule,
  splitWithdrawal,
} from './rules.js';

/**
 * The service fields of a fiat withdrawal, sealed under the master key for `details_box` (the payout
 * needs them in clear once, when it is sent). Format: `f1:<nonce>:<box>`, the box bound to the account
 * and the nonce.
 */
export function sealDetails(
  box: SecretBox,
  accountId: number,
  fields: Readonly<Record<string, string>>,
): string {
  const nonce = randomBytes(12).toString('hex');
  return `f1:${nonce}:${box.seal(JSON.stringify(fields), `fiat-withdrawal:${accountId}:${nonce}`)}`;
}

export function openDetails(box: SecretBox, accountId: number, sealed: string): Record<string, string> {
  const match = /^f1:([0-9a-f]{24}):(.+)$/s.exec(sealed);
  if (!match) throw new Error('unknown fiat details format');
  return JSON.parse(box.open(match[2]!, `fiat-withdrawal:${accountId}:${match[1]!}`)) as Record<
    string,
    string
  >;
}

/** What the fiat withdraw flow shares with the wallet's: the confirmation mail, and the dispatcher's kick. */
export interface WithdrawalHooks {
  /** Issues the 'withdrawal' confirm/cancel links in the creating transaction; mails them after the commit. */
  readonly confirmation: WithdrawalConfirmation;
  /** How long a request waits for its confirmation when the links give no expiry. */
  readonly confirmationTtlMs: number;
  /** Called after the commit of a request that needs no confirmation (the payout dispatcher's kick). */
  readonly queued?: (withdrawal: Withdrawal) => void;
}

function stringFields(fields: Readonly<Record<string, unknown>>): Record<string, string> {
  const result: Record<string, string> = {};
  for (const [key, value] of Object.entries(fields)) {
    if (typeof value !== 'string') {
      throw new ApiError(
        'invalid_field',
        `field ${key} must be a string (a card number as text, for example)`,
      );
    }
    result[key] = value;
  }
  return result;
}

/**
 * Fiat withdrawals behind `POST /v3/auth/withdraw` (the wallet's port). Everything is checked before
 * any money moves: the currency is fiat, the service exists for the amount (gateway payout
 * prerequest), the fields match the service's field rules (and a card number its Luhn check), the
 * amount after the `withdrawall` fee arithmetic is within the service's limits. Then, in one
 * transaction, the request is recorded and its total locked; the payout is sent by the dispatcher
 * (src/fiat/payouts.ts) once the request is queued (at once, or after the e-mail confirmation).
 */
export function fiatWithdrawals(deps: FiatDeps, hooks: WithdrawalHooks): FiatWithdrawals {
  const box = deps.auth.secretBox;
  return {
    async withdraw(accountId: number, body: WithdrawBody): Promise<WithdrawResultItem[]> {
      const fiat = fiatCurrency(deps.reference, deps.gateway, body.withdraw_type);
      if (!fiat.ok) throw lookupError(fiat);
      const { currency } = fiat;
      if (body.address !== undefined && body.address !== '') {
        throw new ApiError('validation_failed', 'a fiat withdrawal takes gateway and fields, not an address');
      }
      const amount = requestAmount(deps.reference, currency.code, body.amount);
      if (amount <= 0n) throw new ApiError('validation_failed', 'amount must be positive');
      let fields: Record<string, string>;
      let gateway = body.gateway;
      if (body.fund_source_id !== undefined) {
        if (body.fields !== undefined) {
          throw new ApiError('validation_failed', 'give either fields or fund_source_id, not both');
        }
        const source = await openFundSource(deps.db, box, accountId, Number(body.fund_source_id));
        if (!source || source.currency !== currency.code) {
          throw new ApiError(
            'fund_source_not_found',
            `no ${currency.code} fund source ${body.fund_source_id} of this account`,
          );
        }
        if (gateway !== undefined && gateway !== source.service) {
          throw new ApiError(
            'validation_failed',
            `fund source ${source.id} belongs to gateway ${source.service}`,
          );
        }
        gateway = source.service;
        fields = source.fields;
      } else {
        fields = stringFields(body.fields ?? {});
      }
      if (!gateway)
        throw new ApiError(
          'validation_failed',
          'gateway (the payout service code) is required for a fiat withdrawal',
        );

      const real = ledgerToReal(deps.reference, currency, amount);
      const found = await payoutService(deps.gateway, currency.code, gatewayText(currency, real), gateway);
      if (!found.ok) throw lookupError(found);
      const { service } = found;
      const checked = checkFields(fields, service.fields);
      if (!checked.ok) throw fieldError(checked);
      const cards = checkCardNumbers(checked.fields, service);
      if (!cards.ok) throw fieldError(cards);
      const rule = feeRule(service.fee, currency.precision.real);
      if (!rule) throw new ApiError('gateway_unavailable', 'the payment gateway answered an unreadable fee');
      const withdrawAll = body.withdrawall === true || body.withdrawall === 1;
      const split = splitWithdrawal(real, rule, withdrawAll);
      if (!split)
        throw new ApiError('amount_out_of_limits', 'the amount does not cover the fee of the service');
      const limits = checkLimits(split.received, service, currency.precision.real);
      if (!limits.ok) throw limitError(limits);

      const account = await findAccount(deps.db, accountId);
      if (!account) throw new ApiError('unknown_key', 'the account of this API key no longer exists');
      // Honoured as for crypto: the request waits for the e-mail link (the wallet's 'withdrawal' handler
      // moves it to queued or releases it); the dispatcher releases it when it expires unconfirmed.
      const confirm = account.withdrawConfirmation;
      let deliver: (() => Promise<void>) | undefined;
      let created: Withdrawal;
      try {
        created = await deps.db.transaction(async (tx) => {
          const withdrawal = await createWithdrawal(tx, {
            accountId,
            currency: currency.code,
            rail: 'fiat',
            provider: service.code,
            destination: describeDestination(service.code, checked.fields),
            detailsBox: sealDetails(box, accountId, checked.fields),
            amount: realToLedger(deps.reference, currency, split.received),
            fee: realToLedger(deps.reference, currency, split.fee),
            feeCurrency: currency.code,
            totalAmount: realToLedger(deps.reference, currency, split.total),
            status: confirm ? 'awaiting_confirmation' : 'queued',
            confirmExpiresAt: confirm ? new Date(deps.now() + hooks.confirmationTtlMs) : null,
          });
          if (confirm) {
            deliver = (await hooks.confirmation.prepare(tx, withdrawal, account.email)).deliver;
          }
          return withdrawal;
        });
      } catch (error) {
        if (error instanceof FundsRefused) {
          throw new ApiError(
            'insufficient_funds',
            `the available ${currency.code.toUpperCase()} balance does not cover ${gatewayText(currency, split.total)} (amount and fee)`,
          );
        }
        throw error;
      }
      if (deliver) {
        await deliver().catch((error: unknown) =>
          deps.log?.error({ err: error, withdrawal: created.id }, 'confirmation mail not sent'),
        );
      }
      if (!confirm) hooks.queued?.(created);
      const fee = gatewayText(currency, split.fee);
      return [
        confirm
          ? {
              status: 'awaiting_confirmation',
              message: `confirm the withdrawal with the link sent to your e-mail (fee ${fee})`,
              withdrawal_id: created.id,
            }
          : {
              status: 'pending',
              message: `the payout of ${gatewayText(currency, split.received)} ${currency.code.toUpperCase()} is being sent (fee ${fee})`,
              withdrawal_id: created.id,
            },
      ];
    },
  };
}
