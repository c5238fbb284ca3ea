/**
 * Amounts as bigint minor units of a currency with `precision` decimals (2 for UAH, USD, RUB).
 * Parsing never goes through a float: a JSON number is read from its decimal text.
 */

export type AmountResult =
  | { readonly ok: true; readonly minor: bigint }
  | { readonly ok: false; readonly reason: 'not_a_number' | 'too_many_decimals' | 'not_positive' };

const DECIMAL = /^(\d{1,15})(?:\.(\d+))?$/;

/** Parses a positive amount given as a decimal string or a JSON number (`500`, `"500.5"`, `12.34`). */
export function parseAmount(input: string | number, precision: number): AmountResult {
  const text = typeof input === 'number' ? (Number.isFinite(input) ? String(input) : '') : input.trim();
  const match = DECIMAL.exec(text);
  if (!match) return { ok: false, reason: 'not_a_number' };
  const [, whole = '0', rawFraction = ''] = match;
  const fraction = rawFraction.replace(/0+$/, '');
  if (fraction.length > precision) return { ok: false, reason: 'too_many_decimals' };
  const minor = BigInt(whole + fraction.padEnd(precision, '0'));
  if (minor <= 0n) return { ok: false, reason: 'not_positive' };
  return { ok: true, minor };
}

/** Parses a non-negative decimal of any scale into an exact `{value, scale}` pair (fee rates). */
export function parseDecimal(text: string): { value: bigint; scale: number } | undefined {
  const match = /^(\d+)(?:\.(\d+))?$/.exec(text);
  if (!match) return undefined;
  const [, whole = '0', fraction = ''] = match;
  return { value: BigInt(whole + fraction), scale: fraction.length };
}

/** Formats minor units with exactly `precision` decimals: `50000n, 2` -> `"500.00"`. */
export function formatMinor(minor: bigint, precision: number): string {
  const negative = minor < 0n;
  const digits = (negative ? -minor : minor).toString().padStart(precision + 1, '0');
  if (precision === 0) return `${negative ? '-' : ''}${digits}`;
  const whole = digits.slice(0, digits.length - precision);
  const fraction = digits.slice(digits.length - precision);
  return `${negative ? '-' : ''}${whole}.${fraction}`;
}

/** A decimal string as a JSON number for fields the spec types as numbers (limits, fee parts). */
export function decimalToNumber(text: string): number {
  return Number(text);
}
