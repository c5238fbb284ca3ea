import { parseDecimal } from './money.js';

/**
 * A service fee: `rate` percent of the amount plus `fixed`, then raised to `min` and lowered to
 * `max` where those are non-zero (exchange-reference.md "Payment gateway"). All decimal strings.
 */
export interface FeeRule {
  readonly rate: string;
  readonly fixed: string;
  readonly min: string;
  readonly max: string;
}

function toMinor(text: string, precision: number): bigint {
  const parsed = parseDecimal(text);
  if (!parsed) throw new RangeError(`not a decimal: ${text}`);
  if (parsed.scale > precision) throw new RangeError(`${text} has more than ${precision} decimals`);
  return parsed.value * 10n ** BigInt(precision - parsed.scale);
}

/**
 * The fee in minor units for `amount` minor units: exact, the percentage rounded half-up to the
 * currency's minor unit (1.5 % of 0.33 = 0.00495 -> 0.00).
 */
export function computeFee(amount: bigint, rule: FeeRule, precision: number): bigint {
  const rate = parseDecimal(rule.rate);
  if (!rate) throw new RangeError(`not a decimal: ${rule.rate}`);
  // amount * rate / 100, where rate = rate.value / 10^rate.scale
  const denominator = 100n * 10n ** BigInt(rate.scale);
  const numerator = amount * rate.value;
  let percent = numerator / denominator;
  if ((numerator % denominator) * 2n >= denominator) percent += 1n;
  let fee = percent + toMinor(rule.fixed, precision);
  const min = toMinor(rule.min, precision);
  const max = toMinor(rule.max, precision);
  if (min > 0n && fee < min) fee = min;
  if (max > 0n && fee > max) fee = max;
  return fee;
}

/** Checks a fee rule's parts are decimals the currency can express (used when the config loads). */
export function feeRuleProblem(rule: FeeRule, precision: number): string | undefined {
  if (!parseDecimal(rule.rate)) return `rate "${rule.rate}" is not a non-negative decimal`;
  for (const part of ['fixed', 'min', 'max'] as const) {
    const parsed = parseDecimal(rule[part]);
    if (!parsed) return `${part} "${rule[part]}" is not a non-negative decimal`;
    if (parsed.scale > precision) return `${part} "${rule[part]}" has more than ${precision} decimals`;
  }
  const max = toMinor(rule.max, precision);
  if (max > 0n && toMinor(rule.min, precision) > max) return 'min is greater than max';
  return undefined;
}
