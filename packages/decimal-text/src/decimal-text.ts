/**
 * The one reader of amounts and ids from requests, for every route of the exchange and the gateway.
 *
 * An amount is a JSON number or a plain decimal string (`^-?\d+(\.\d+)?$`, ASCII digits, no spaces, no
 * `+`, no `.5` or `5.`, no exponent, no hex). Its value is the exact decimal value of what was written,
 * as bigint minor units: never a float, never rounded. A JSON number counts by its exact value in any
 * notation JSON allows (`1e-8` is 0.00000001, as JSON.stringify writes it), but arrives here as a double,
 * so the body must be read with `parseJsonKeepingNumberText` (json-numbers.ts): it leaves a number a
 * double holds exactly as a number, whose shortest text (`String(0.1)` is "0.1") is then its exact
 * decimal, and turns any other (`0.99999999999999999`) into the string of its exact plain decimal.
 *
 * An id is a JSON integer or a string of digits, nothing else (no hex, exponent, sign, boolean string).
 */

const PLAIN_DECIMAL = /^-?[0-9]+(?:\.[0-9]+)?$/;
const DIGITS = /^[0-9]+$/;

/**
 * Why a value is not an amount: not a plain decimal at all, more decimals than allowed, or more minor
 * units than a bigint column (int8) holds.
 */
export type DecimalRefusal = 'not_a_decimal' | 'too_many_decimals' | 'out_of_range';

/** The largest minor units an amount may have: every service stores amounts in int8 columns. */
export const MAX_MINOR = 2n ** 63n - 1n;

export type DecimalResult =
  | { readonly ok: true; readonly minor: bigint }
  | { readonly ok: false; readonly reason: DecimalRefusal };

/**
 * The plain decimal text of a request value: a plain decimal string as it is, a finite JSON number as
 * the exact decimal of its shortest text (exponent form expanded); anything else (booleans, arrays,
 * objects, null, other strings) is undefined.
 */
export function decimalText(value: unknown): string | undefined {
  if (typeof value === 'string') return PLAIN_DECIMAL.test(value) ? value : undefined;
  if (typeof value === 'number' && Number.isFinite(value)) return numberText(value);
  return undefined;
}

/** The shortest round-trip text of a finite double as a plain decimal (`1e-7` -> "0.0000001"). */
export function numberText(value: number): string {
  const text = String(Object.is(value, -0) ? 0 : value);
  return plainDecimal(text) ?? text;
}

/** Longest plain text an exponent is expanded to; past it a number is refused, not expanded. */
export const MAX_PLAIN_LENGTH = 1000;

/**
 * The exact plain decimal of a number written in JSON's grammar, exponent or not (`"1.5e-3"` ->
 * `"0.0015"`, `"1E+3"` -> `"1000"`); undefined when it is no JSON number or its plain text would be
 * longer than `MAX_PLAIN_LENGTH` (`1e999999999`).
 */
export function plainDecimal(text: string): string | undefined {
  const match = /^(-?)([0-9]+)(?:\.([0-9]+))?(?:[eE]([+-]?[0-9]+))?$/.exec(text);
  if (!match) return undefined;
  const [, sign = '', whole = '', fraction = '', exponentText] = match;
  if (exponentText === undefined) return text;
  const digits = whole + fraction;
  const exponent = Number(exponentText);
  const point = whole.length + exponent;
  if (!Number.isSafeInteger(exponent) || Math.abs(point) + digits.length > MAX_PLAIN_LENGTH) return undefined;
  if (point <= 0) return `${sign}0.${'0'.repeat(-point)}${digits}`;
  if (point >= digits.length) return `${sign}${digits}${'0'.repeat(point - digits.length)}`;
  return `${sign}${digits.slice(0, point)}.${digits.slice(point)}`;
}

/**
 * Parses an amount into minor units with `precision` decimals. Trailing zeros beyond the precision
 * are allowed (`"1.50"` at precision 1); other decimals beyond it are `too_many_decimals`, never
 * rounded. Signs and bounds are the caller's rules.
 */
export function parseDecimal(value: unknown, precision: number): DecimalResult {
  const text = decimalText(value);
  if (text === undefined) return { ok: false, reason: 'not_a_decimal' };
  return parseDecimalText(text, precision);
}

/** `parseDecimal` of a text already known to be a plain decimal (see `decimalText`). */
export function parseDecimalText(text: string, precision: number): DecimalResult {
  if (!PLAIN_DECIMAL.test(text)) return { ok: false, reason: 'not_a_decimal' };
  const negative = text.startsWith('-');
  const [whole = '0', rawFraction = ''] = (negative ? text.slice(1) : text).split('.');
  const fraction = rawFraction.replace(/0+$/, '');
  if (fraction.length > precision) return { ok: false, reason: 'too_many_decimals' };
  // A longer whole part is past any bound: no BigInt of thousands of digits is built for it.
  if (whole.replace(/^0+/, '').length + precision > 40) return { ok: false, reason: 'out_of_range' };
  const minor = BigInt(whole + fraction.padEnd(precision, '0'));
  if (minor > MAX_MINOR) return { ok: false, reason: 'out_of_range' };
  return { ok: true, minor: negative ? -minor : minor };
}

/**
 * A positive integer id: a JSON integer or a string of ASCII digits, at most `max`; anything else
 * (hex, exponent, sign, decimals, booleans, arrays, an integer a double cannot hold) is undefined.
 */
export function parseId(value: unknown, max: number = Number.MAX_SAFE_INTEGER): number | undefined {
  let id: number;
  if (typeof value === 'number') {
    id = value;
  } else if (typeof value === 'string' && DIGITS.test(value) && value.length <= 16) {
    id = Number(value);
  } else {
    return undefined;
  }
  return Number.isSafeInteger(id) && id >= 1 && id <= max ? id : undefined;
}
