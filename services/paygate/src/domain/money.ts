import { decimalText, parseDecimalText } from '@platform/decimal-text/decimal-text';

/**
 * Amounts as bigint minor units of a currency with `precision` decimals (2 for UAH, USD, RUB).
 * Parsing never goes through a float: a JSON number is read from its decimal text.
 */

export type AmountResult =
  | { readonly ok: true; readonly minor: bigint }
  | { readonly ok: false; readonly reason: 'not_a_number' | 'too_many_decimals' | 'not_positive' };

/** At most 15 whole digits: every amount fits a bigint column with room for fees. */
const MAX_WHOLE_DIGITS = 15;

/**
 * Parses a positive amount given as a JSON number or a plain decimal string (`500`, `"500.5"`, `12.34`)
 * through @platform/decimal-text, the one reader of amounts: from its text, never a float; `"0x1"`,
 * `"1e0"`, `" 5"`, `"+5"`, `".5"`, `true` or `[5]` are not numbers, excess decimals are never rounded.
 */
export function parseAmount(input: unknown, precision: number): AmountResult {
  const text = decimalText(input);
  // A sign is no part of an amount here: the gateway's amounts are positive by their grammar.
  if (text === undefined || text.startsWith('-')) return { ok: false, reason: 'not_a_number' };
  const whole = text.split('.')[0] ?? '';
  if (whole.replace(/^0+(?=.)/, '').length > MAX_WHOLE_DIGITS) return { ok: false, reason: 'not_a_number' };
  const parsed = parseDecimalText(text, precision);
  if (!parsed.ok)
    return {
      ok: false,
      reason: parsed.reason === 'too_many_decimals' ? 'too_many_decimals' : 'not_a_number',
    };
  if (parsed.minor <= 0n) return { ok: false, reason: 'not_positive' };
  return { ok: true, minor: parsed.minor };
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
