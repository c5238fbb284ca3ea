import { parseDecimal as parseDecimalText } from '@platform/decimal-text/decimal-text';
import type { InputRefusal } from './requests.js';

/**
 * A decimal from a request in engine units with `precision` decimals, or why it is not one: a JSON
 * number or a plain decimal string, read from its text by @platform/decimal-text (never a float).
 */
export function parseDecimal(
  value: unknown,
  precision: number,
  field: string,
): { readonly ok: true; readonly value: bigint } | InputRefusal {
  const parsed = parseDecimalText(value, precision);
  if (parsed.ok) return { ok: true, value: parsed.minor };
  if (parsed.reason === 'too_many_decimals') {
    return {
      ok: false,
      code: 'TOO_MANY_DECIMALS',
      message: `${field} has more than ${precision} decimals, the precision of this market`,
    };
  }
  return {
    ok: false,
    code: 'NOT_A_DECIMAL',
    message: `${field} must be a JSON number or a plain decimal string`,
  };
}
