import { parseAmount } from '../money/decimal.js';
import type { InputRefusal } from './requests.js';

/** A decimal from a request in engine units with `precision` decimals, or why it is not one. */
export function parseDecimal(
  value: unknown,
  precision: number,
  field: string,
): { readonly ok: true; readonly value: bigint } | InputRefusal {
  const text = typeof value === 'number' && Number.isFinite(value) ? String(value) : value;
  if (typeof text !== 'string' || text.trim() === '' || /e/i.test(text)) {
    return { ok: false, code: 'NOT_A_DECIMAL', message: `${field} must be a decimal number` };
  }
  const parsed = parseAmount(text, precision);
  if (parsed.ok) return { ok: true, value: parsed.value };
  if (parsed.reason === 'too_many_decimals') {
    return {
      ok: false,
      code: 'TOO_MANY_DECIMALS',
      message: `${field} has more than ${precision} decimals, the precision of this market`,
    };
  }
  return { ok: false, code: 'NOT_A_DECIMAL', message: `${field} must be a decimal number` };
}
