/**
 * Checks a crypto withdrawal request against the currency's rules (pure apart from the address check,
 * which the custody answers): address, memo (`payment_id`, `allow_blank_memo`), amount precision,
 * `min_withdraw`, the fixed fee in the currency `asset.currency` names and `withdrawall`.
 * Refusals are ApiErrors; the balance is checked by the ledger when the funds are locked.
 */
import { ApiError } from '../errors.js';
import { requestAmount } from '../http/amounts.js';
import { parseAmount } from '../money/decimal.js';
import type { ReferenceData } from '../reference/load.js';
import { splitFixedFee } from './arithmetic.js';
import type { WithdrawBody } from './fiat-port.js';

export interface CheckedWithdrawal {
  readonly currency: string;
  readonly address: string;
  readonly memo: string | null;
  /** Ledger minor units: what the recipient gets, the fee (in feeCurrency), the debit in currency. */
  readonly amount: bigint;
  readonly fee: bigint;
  readonly feeCurrency: string;
  readonly totalAmount: bigint;
}

export interface CoinRules {
  readonly fee: bigint;
  readonly feeCurrency: string;
  readonly minWithdraw: bigint;
}

/** The coin's fee and minimum from the reference data, in ledger minor units. */
export function coinRules(reference: ReferenceData, currency: string): CoinRules {
  const entry = reference.fees.find((f) => f.code === currency && f.category === 'coin');
  if (!entry || !('min_withdraw' in entry)) return { fee: 0n, feeCurrency: currency, minWithdraw: 0n };
  const asset = entry.withdraw_fees[0]?.asset;
  const feeCurrency = asset?.currency ?? currency;
  // The published fee is a JSON number; its shortest decimal form is the file's decimal text.
  const fee = parseAmount(String(asset?.amount ?? 0), reference.ledgerPrecision(feeCurrency));
  const min = parseAmount(String(entry.min_withdraw.amount), reference.ledgerPrecision(currency));
  return { fee: fee.ok ? fee.value : 0n, feeCurrency, minWithdraw: min.ok ? min.value : 0n };
}

const XRP_TAG = /^\d{1,10}$/;

/** Validates the memo rules; returns the memo to send (null for none). */
export function checkMemo(currency: string, hasMemo: boolean, body: WithdrawBody): string | null {
  const memo = body.payment_id?.trim() ?? '';
  if (!hasMemo) {
    if (memo !== '') throw new ApiError('invalid_memo', `${currency} takes no memo (payment_id)`);
    return null;
  }
  if (memo === '') {
    if (body.allow_blank_memo === true) return null;
    throw new ApiError(
      'invalid_memo',
      `${currency} needs a memo (payment_id); send allow_blank_memo: true to withdraw without one`,
    );
  }
  if (currency === 'xrp' && (!XRP_TAG.test(memo) || BigInt(memo) > 4_294_967_295n)) {
    throw new ApiError('invalid_memo', 'an xrp destination tag is an integer from 0 to 4294967295');
  }
  return memo;
}

/** Everything but the address check and the balance. */
export function checkWithdrawal(
  reference: ReferenceData,
  body: WithdrawBody,
): Omit<CheckedWithdrawal, 'address'> {
  const currency = reference.currency(body.withdraw_type);
  if (!currency) throw new ApiError('unknown_currency', `unknown currency "${body.withdraw_type}"`);
  const code = currency.code;
  const memo = checkMemo(code, currency.has_memo, body);
  const requested = requestAmount(reference, code, body.amount);
  if (requested <= 0n) throw new ApiError('validation_failed', 'amount must be positive');
  const rules = coinRules(reference, code);
  const feeInSame = rules.feeCurrency === code;
  const withdrawall = body.withdrawall === true || body.withdrawall === 1;
  const split = splitFixedFee(requested, rules.fee, withdrawall, feeInSame);
  if (!split.ok) {
    throw new ApiError('amount_below_minimum', `amount does not cover the withdrawal fee of ${code}`);
  }
  if (split.received < rules.minWithdraw) {
    throw new ApiError(
      'amount_below_minimum',
      `the amount sent must be at least the min_withdraw of ${code}`,
    );
  }
  return {
    currency: code,
    memo,
    amount: split.received,
    fee: split.fee,
    feeCurrency: rules.feeCurrency,
    totalAmount: split.total,
  };
}
