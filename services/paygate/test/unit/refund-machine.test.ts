import { describe, expect, it } from 'vitest';
import { refundCanMove, refundHoldsAmount, refundIsDue, refundRoom } from '../../src/refunds/machine.js';

describe('refund state machine', () => {
  it('moves from processing to an end, and never out of one', () => {
    expect(refundCanMove('processing', 'success')).toBe(true);
    expect(refundCanMove('processing', 'failed')).toBe(true);
    expect(refundCanMove('success', 'failed')).toBe(false);
    expect(refundCanMove('failed', 'success')).toBe(false);
    expect(refundCanMove('processing', 'processing')).toBe(false);
  });
  it('is due at its settle time while processing', () => {
    expect(refundIsDue('processing', 100, 99)).toBe(false);
    expect(refundIsDue('processing', 100, 100)).toBe(true);
    expect(refundIsDue('success', 100, 200)).toBe(false);
  });
  it('counts processing and successful refunds against the invoice, not failed ones', () => {
    expect(refundHoldsAmount('processing')).toBe(true);
    expect(refundHoldsAmount('success')).toBe(true);
    expect(refundHoldsAmount('failed')).toBe(false);
  });
  it('never lets refunds exceed what was paid', () => {
    expect(refundRoom(50_000n, 0n, 50_000n)).toEqual({ ok: true, remaining: 0n });
    expect(refundRoom(50_000n, 20_000n, 10_000n)).toEqual({ ok: true, remaining: 20_000n });
    expect(refundRoom(50_000n, 20_000n, 30_001n)).toEqual({ ok: false, refundable: 30_000n });
    expect(refundRoom(50_000n, 50_000n, 1n)).toEqual({ ok: false, refundable: 0n });
    expect(refundRoom(50_000n, 0n, 0n)).toEqual({ ok: false, refundable: 50_000n });
  });
});
