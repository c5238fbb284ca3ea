import { describe, expect, it } from 'vitest';
import {
  divideDecimals,
  formatAmount,
  formatAmountV2,
  multiplyDecimals,
  parseAmount,
} from '../../src/money/decimal.js';

describe('decimal amounts in minor units', () => {
  it('parses decimals without floats, refusing more decimals than the currency allows', () => {
    expect(parseAmount('1.5', 8)).toEqual({ ok: true, value: 150_000_000n });
    expect(parseAmount('-0.00000001', 8)).toEqual({ ok: true, value: -1n });
    expect(parseAmount('12345678901234567890.12', 2)).toEqual({ ok: true, value: 1234567890123456789012n });
    expect(parseAmount('1.10', 1)).toEqual({ ok: true, value: 11n });
    expect(parseAmount('0.001', 2)).toEqual({ ok: false, reason: 'too_many_decimals' });
    for (const bad of ['', '1e5', '0x10', '1.', '.5', 'NaN', '1,5']) {
      expect(parseAmount(bad, 8)).toEqual({ ok: false, reason: 'not_a_number' });
    }
  });

  it('formats minor units back to decimal strings', () => {
    expect(formatAmount(150_000_000n, 8)).toBe('1.5');
    expect(formatAmount(-1n, 8)).toBe('-0.00000001');
    expect(formatAmount(0n, 2)).toBe('0');
    expect(formatAmount(1200n, 0)).toBe('1200');
    expect(formatAmountV2(0n, 8)).toBe('0.0');
    expect(formatAmountV2(250n, 2)).toBe('2.5');
  });

  it('multiplies and divides decimal strings exactly with half-up rounding', () => {
    expect(multiplyDecimals('0.0005', '37250.5', 2)).toBe('18.63');
    expect(multiplyDecimals('3', '0.1', 2)).toBe('0.3');
    expect(divideDecimals('1', '3', 4)).toBe('0.3333');
    expect(divideDecimals('2', '3', 4)).toBe('0.6667');
    expect(divideDecimals('37250.5', '0.0272', 2)).toBe('1369503.68');
  });
});
