/**
 * Decimal amounts as integers in minor units (bigint). A currency with precision 8 stores
 * 1.5 as 150000000n. Parsing never goes through a float.
 */

export type ParseResult =
  | { readonly ok: true; readonly value: bigint }
  | { readonly ok: false; readonly reason: 'not_a_number' | 'too_many_decimals' };

const DECIMAL = /^([+-])?(\d+)(?:\.(\d+))?$/;

/** Parses `"-12.345"` into minor units with `precision` decimals; more decimals than allowed is an error. */
export function parseAmount(text: string, precision: number): ParseResult {
  const match = DECIMAL.exec(text.trim());
  if (!match) return { ok: false, reason: 'not_a_number' };
  const [, sign, whole = '0', rawFraction = ''] = match;
  const fraction = rawFraction.replace(/0+$/, '');
  if (fraction.length > precision) return { ok: false, reason: 'too_many_decimals' };
  const minor = BigInt(whole + fraction.padEnd(precision, '0'));
  return { ok: true, value: sign === '-' ? -minor : minor };
}

/** Re-expresses minor units of `from` decimals in `to` >= `from` decimals (exact). */
export function rescale(minor: bigint, from: number, to: number): bigint {
  if (to < from) throw new RangeError('rescale only widens: narrowing would round');
  return minor * 10n ** BigInt(to - from);
}

/** Formats minor units as a plain decimal string with trailing zeros trimmed, e.g. `"1.5"`, `"0"`. */
export function formatAmount(minor: bigint, precision: number): string {
  const negative = minor < 0n;
  const digits = (negative ? -minor : minor).toString().padStart(precision + 1, '0');
  const whole = digits.slice(0, digits.length - precision);
  const fraction = digits.slice(digits.length - precision).replace(/0+$/, '');
  return `${negative ? '-' : ''}${whole}${fraction ? `.${fraction}` : ''}`;
}

/** Formats with at least one decimal (`"0.0"`, `"12.5"`), the way Peatio-style v2 clients expect. */
export function formatAmountV2(minor: bigint, precision: number): string {
  const text = formatAmount(minor, precision);
  return text.includes('.') ? text : `${text}.0`;
}

/** Converts minor units to a JSON number for fields the spec types as numbers (wallet balances). */
export function amountToNumber(minor: bigint, precision: number): number {
  return Number(formatAmount(minor, precision));
}

function scaled(text: string): { value: bigint; scale: number } {
  const [whole = '0', fraction = ''] = text.split('.');
  return { value: BigInt(whole + fraction), scale: fraction.length };
}

function roundDiv(numerator: bigint, denominator: bigint): bigint {
  const quotient = numerator / denominator;
  return (numerator % denominator) * 2n >= denominator ? quotient + 1n : quotient;
}

/** Exact product of two non-negative decimal strings, rounded half-up to `decimals` places. */
export function multiplyDecimals(a: string, b: string, decimals: number): string {
  const x = scaled(a);
  const y = scaled(b);
  const product = x.value * y.value;
  const scale = x.scale + y.scale;
  const rounded =
    scale > decimals
      ? roundDiv(product, 10n ** BigInt(scale - decimals))
      : product * 10n ** BigInt(decimals - scale);
  return formatAmount(rounded, decimals);
}

/** Exact quotient of two positive decimal strings, rounded half-up to `decimals` places. */
export function divideDecimals(a: string, b: string, decimals: number): string {
  const x = scaled(a);
  const y = scaled(b);
  // a/b = (x.value / 10^xs) / (y.value / 10^ys) = x.value * 10^(ys - xs) / y.value
  const shift = y.scale - x.scale + decimals;
  const numerator = shift >= 0 ? x.value * 10n ** BigInt(shift) : x.value;
  const denominator = shift >= 0 ? y.value : y.value * 10n ** BigInt(-shift);
  return formatAmount(roundDiv(numerator, denominator), decimals);
}
