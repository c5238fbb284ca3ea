import { ApiError } from '../errors.js';
import { parseAmount, rescale } from '../money/decimal.js';
import type { ReferenceData } from '../reference/load.js';

/**
 * Turns an amount from a request (a JSON number, as the spec types `amount`, or a decimal string)
 * into ledger minor units of `currencyCode` (input limited to `precision.real` decimals), refusing unknown currencies and excess decimals with the
 * service's errors. JSON numbers are read through their shortest decimal form (`0.1` is "0.1"),
 * so a client's `0.1` never becomes 0.1000000000000000055.
 */
export function requestAmount(
  reference: ReferenceData,
  currencyCode: string,
  value: number | string,
  field = 'amount',
): bigint {
  const currency = reference.currency(currencyCode);
  if (!currency) throw new ApiError('unknown_currency', `unknown currency "${currencyCode}"`);
  let text: string;
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new ApiError('validation_failed', `${field} must be a finite number`);
    text = String(value);
    if (/e/i.test(text)) text = value.toFixed(Math.min(100, currency.precision.real + 1));
  } else {
    text = value;
  }
  const parsed = parseAmount(text, currency.precision.real);
  if (parsed.ok)
    return rescale(parsed.value, currency.precision.real, reference.ledgerPrecision(currency.code));
  if (parsed.reason === 'too_many_decimals') {
    throw new ApiError(
      'too_many_decimals',
      `${field} has more than ${currency.precision.real} decimals, the precision of ${currency.code}`,
    );
  }
  throw new ApiError('validation_failed', `${field} must be a decimal number`);
}
