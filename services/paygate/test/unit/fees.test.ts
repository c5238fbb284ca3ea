import { describe, expect, it } from 'vitest';
import { computeFee, feeRuleProblem } from '../../src/domain/fees.js';
import { checkLimits } from '../../src/domain/limits.js';
import { formatMinor, parseAmount } from '../../src/domain/money.js';

const rule = (rate: string, fixed = '0', min = '0', max = '0') => ({ rate, fixed, min, max });

describe('fees', () => {
  it('takes rate percent of the amount plus fixed, exactly', () => {
    expect(computeFee(50_000n, rule('1.5'), 2)).toBe(750n); // 500.00 -> 7.50
    expect(computeFee(10_000n, rule('2.5', '0.3'), 2)).toBe(280n); // 100.00 -> 2.50 + 0.30
    // 0.1 + 0.2 style float traps do not exist here: 0.3 % of 1000.10 = 3.0003 -> 3.00
    expect(computeFee(100_010n, rule('0.3'), 2)).toBe(300n);
  });

  it('rounds the percentage half-up to the minor unit', () => {
    expect(computeFee(33n, rule('1.5'), 2)).toBe(0n); // 0.00495
    expect(computeFee(100n, rule('0.5'), 2)).toBe(1n); // 0.005 -> 0.01
  });

  it('raises to min and lowers to max only where they are non-zero', () => {
    expect(computeFee(1_000n, rule('1', '0', '0.5'), 2)).toBe(50n); // 0.10 -> min 0.50
    expect(computeFee(10_000_000n, rule('1', '0', '0', '50'), 2)).toBe(5_000n); // 1000 -> max 50
    expect(computeFee(10_000_000n, rule('1', '0', '0', '0'), 2)).toBe(100_000n); // no cap
    expect(computeFee(1_000n, rule('0', '0', '0', '0'), 2)).toBe(0n);
  });

  it('reports fee rules the currency cannot express', () => {
    expect(feeRuleProblem(rule('1.5'), 2)).toBeUndefined();
    expect(feeRuleProblem(rule('x'), 2)).toMatch(/rate/);
    expect(feeRuleProblem(rule('1', '0.001'), 2)).toMatch(/fixed .* more than 2 decimals/);
    expect(feeRuleProblem(rule('1', '0', '10', '5'), 2)).toMatch(/min is greater than max/);
  });
});

describe('amounts and limits', () => {
  it('parses numbers and strings without floats, and formats with the currency decimals', () => {
    expect(parseAmount(500, 2)).toEqual({ ok: true, minor: 50_000n });
    expect(parseAmount('500.5', 2)).toEqual({ ok: true, minor: 50_050n });
    expect(parseAmount(0.1, 2)).toEqual({ ok: true, minor: 10n });
    expect(parseAmount('1.005', 2)).toEqual({ ok: false, reason: 'too_many_decimals' });
    expect(parseAmount('0', 2)).toEqual({ ok: false, reason: 'not_positive' });
    expect(parseAmount('-1', 2)).toEqual({ ok: false, reason: 'not_a_number' });
    expect(parseAmount(1e21, 2)).toEqual({ ok: false, reason: 'not_a_number' });
    expect(formatMinor(50_750n, 2)).toBe('507.50');
    expect(formatMinor(5n, 2)).toBe('0.05');
  });

  it('accepts both limits themselves and refuses outside them', () => {
    const limits = { min: 1_000n, max: 5_000_000n };
    expect(checkLimits(1_000n, limits)).toEqual({ ok: true });
    expect(checkLimits(5_000_000n, limits)).toEqual({ ok: true });
    expect(checkLimits(999n, limits)).toEqual({ ok: false, reason: 'below_min', limit: 1_000n });
    expect(checkLimits(5_000_001n, limits)).toEqual({ ok: false, reason: 'above_max', limit: 5_000_000n });
  });
});
