import { describe, expect, it } from 'vitest';
import {
  adjustment,
  type Leg,
  lockFunds,
  settleFill,
  transfer,
  validateEntry,
} from '../../src/ledger/entry.js';

function sums(legs: readonly Leg[]): Record<string, bigint> {
  const out: Record<string, bigint> = {};
  for (const leg of legs) out[leg.currency] = (out[leg.currency] ?? 0n) + leg.amount;
  return out;
}

describe('journal entries', () => {
  it('builds entries whose legs sum to zero per currency', () => {
    const built = [
      adjustment(1, 99, 'btc', 5n, 'credit'),
      adjustment(1, 99, 'btc', -5n, 'debit'),
      lockFunds(1, 'uah', 10n, 'order'),
      lockFunds(1, 'uah', 10n, 'cancel', true),
      transfer(1, 2, 'eth', 3n, 'code'),
      settleFill(
        {
          buyerId: 1,
          sellerId: 2,
          feeAccountId: 3,
          base: 'btc',
          quote: 'uah',
          baseAmount: 100n,
          quoteAmount: 5000n,
          buyerFee: 1n,
          sellerFee: 0n,
        },
        'fill',
      ),
    ];
    for (const result of built) {
      if (!result.ok) throw new Error(result.detail);
      expect(Object.values(sums(result.entry.legs)).every((sum) => sum === 0n)).toBe(true);
    }
  });

  it('refuses unbalanced, empty, zero and negative movements', () => {
    expect(validateEntry({ kind: 'x', reason: 'x', legs: [] })).toMatchObject({
      ok: false,
      problem: 'no_legs',
    });
    expect(
      validateEntry({
        kind: 'x',
        reason: 'x',
        legs: [
          { accountId: 1, currency: 'btc', bucket: 'available', amount: 1n },
          { accountId: 2, currency: 'eth', bucket: 'available', amount: -1n },
        ],
      }),
    ).toMatchObject({ ok: false, problem: 'unbalanced' });
    expect(adjustment(1, 2, 'btc', 0n, 'nothing')).toMatchObject({ ok: false, problem: 'zero_leg' });
    expect(lockFunds(1, 'btc', -1n, 'negative')).toMatchObject({ ok: false, problem: 'not_positive' });
    expect(
      settleFill(
        {
          buyerId: 1,
          sellerId: 2,
          feeAccountId: 3,
          base: 'btc',
          quote: 'uah',
          baseAmount: 1n,
          quoteAmount: 1n,
          buyerFee: 2n,
          sellerFee: 0n,
        },
        'fee above amount',
      ),
    ).toMatchObject({ ok: false });
  });
});
