import { describe, expect, it } from 'vitest';
import { DEFAULT_REFERENCE_FILE } from '../../src/config.js';
import { ApiError } from '../../src/errors.js';
import { requestAmount } from '../../src/http/amounts.js';
import { loadReferenceData } from '../../src/reference/load.js';

const reference = loadReferenceData(DEFAULT_REFERENCE_FILE);

function refusal(run: () => unknown): string | undefined {
  try {
    run();
  } catch (error) {
    if (error instanceof ApiError) return error.errorName;
    throw error;
  }
  return undefined;
}

describe('request amounts', () => {
  it('reads JSON numbers and decimal strings into minor units', () => {
    // btc: 8 decimals accepted, ledger minor units of 10 decimals; uah: 2 accepted, ledger 6.
    expect(requestAmount(reference, 'btc', 0.1)).toBe(1_000_000_000n);
    expect(requestAmount(reference, 'BTC', '1.00000001')).toBe(10_000_000_100n);
    expect(requestAmount(reference, 'btc', 1e-7)).toBe(1_000n);
    expect(requestAmount(reference, 'uah', -12.5)).toBe(-12_500_000n);
  });

  it('refuses more decimals than the currency allows, unknown currencies and junk', () => {
    expect(refusal(() => requestAmount(reference, 'uah', 1.001))).toBe('too_many_decimals');
    expect(refusal(() => requestAmount(reference, 'btc', '0.000000001'))).toBe('too_many_decimals');
    expect(refusal(() => requestAmount(reference, 'btc', 1e-9))).toBe('too_many_decimals');
    expect(refusal(() => requestAmount(reference, 'doge', 1))).toBe('unknown_currency');
    expect(refusal(() => requestAmount(reference, 'btc', '1e5'))).toBe('validation_failed');
    expect(refusal(() => requestAmount(reference, 'btc', Number.NaN))).toBe('validation_failed');
  });
});
