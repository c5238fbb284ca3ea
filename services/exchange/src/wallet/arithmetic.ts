/**
 * Withdrawal arithmetic for a fixed fee (pure). See exchange-reference.md, "withdrawall":
 * - withdrawall false: the recipient gets `amount`, the balance is debited amount + fee;
 * - withdrawall true: the balance is debited `amount`, the fee is taken from it and the recipient
 *   gets amount - fee (so received + fee = amount).
 * A fee charged in another currency (the coin fee's `asset.currency`) cannot be taken from the amount:
 * it is debited on top in its own currency, whatever `withdrawall` says.
 */
export type WithdrawalSplit =
  | { ok: true; received: bigint; fee: bigint; total: bigint }
  | { ok: false; reason: 'fee_exceeds_amount' | 'not_positive' };

export function splitFixedFee(
  amount: bigint,
  fee: bigint,
  withdrawall: boolean,
  feeInSameCurrency: boolean,
): WithdrawalSplit {
  if (amount <= 0n || fee < 0n) return { ok: false, reason: 'not_positive' };
  if (!feeInSameCurrency) return { ok: true, received: amount, fee, total: amount };
  if (!withdrawall) return { ok: true, received: amount, fee, total: amount + fee };
  if (amount <= fee) return { ok: false, reason: 'fee_exceeds_amount' };
  return { ok: true, received: amount - fee, fee, total: amount };
}
