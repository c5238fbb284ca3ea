import { MAX_MINOR, parseDecimal } from '@platform/decimal-text/decimal-text';
import { ApiError } from '../errors.js';
import { rescale } from '../money/decimal.js';
import type { ReferenceData } from '../reference/load.js';

/**
 * Turns an amount from a request (a JSON number, as the spec types `amount`, or a plain decimal
 * string) into ledger minor units of `currencyCode` (input limited to `precision.real` decimals),
 * refusing unknown currencies and excess decimals with the service's errors. Read through
 * @platform/decimal-text, the one reader of amounts: from its text, never through a float; `"0x1"`,
 * `"1e0"`, `" 1"`, `"+1"`, `".5"`, `true` or `[1]` are `validation_failed`.
 */
export function requestAmount(
  reference: ReferenceData,
  currencyCode: string,
  value: unknown,
  field = 'amount',
): bigint {
  const currency = reference.currency(currencyCode);
  if (!currency) throw new ApiError('unknown_currency', `unknown currency "${currencyCode}"`);
  const parsed = parseDecimal(value, currency.precision.real);
  if (parsed.ok) {
    const ledger = rescale(parsed.minor, currency.precision.real, reference.ledgerPrecision(currency.code));
    // Past what the ledger's int8 columns hold: a 400 here, not a database error later.
    if (ledger > MAX_MINOR || -ledger > MAX_MINOR)
      throw new ApiError('validation_failed', `${field} is too large`);
    return ledger;
  }
  if (parsed.reason === 'too_many_decimals') {
    throw new ApiError(
      'too_many_decimals',
      `${field} has more than ${currency.precision.real} decimals, the precision of ${currency.code}`,
    );
  }
  if (parsed.reason === 'out_of_range') throw new ApiError('validation_failed', `${field} is too large`);
  throw new ApiError('validation_failed', `${field} must be a JSON number or a plain decimal string`);
}
