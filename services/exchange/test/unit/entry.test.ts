import { describe, expect, it } from 'vitest';
import {
  adjustment,
  type Leg,
  lockFunds,
  netEntry,
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

  it('nets several entries into one with the same effect on every balance', () => {
    const entries = [
      lockFunds(1, 'uah', 100n, 'order 1'),
      settleFill(
        {
          buyerId: 1,
          sellerId: 2,
          feeAccountId: 3,
          base: 'btc',
          quote: 'uah',
          baseAmount: 5n,
          quoteAmount: 60n,
          buyerFee: 1n,
          sellerFee: 2n,
        },
        'trade 1',
      ),
      lockFunds(1, 'uah', 40n, 'release order 1', true),
    ].map((built) => (built.ok ? built.entry : expect.unreachable()));
    const effect = (legs: readonly Leg[]) => {
      const out: Record<string, bigint> = {};
      for (const leg of legs) {
        const key = `${leg.accountId}:${leg.currency}:${leg.bucket}`;
        out[key] = (out[key] ?? 0n) + leg.amount;
        if (out[key] === 0n) delete out[key];
      }
      return out;
    };
    const net = netEntry('batch', 'btcuah 1-3', entries);
    expect(net && validateEntry(net).ok).toBe(true);
    expect(effect(net!.legs)).toEqual(effect(entries.flatMap((e) => e.legs)));
    // The lock and the release of what was not spent net out with the trade: 60 uah left locked funds.
    expect(net!.legs).toContainEqual({ accountId: 1, currency: 'uah', bucket: 'available', amount: -60n });
    expect(net!.legs.some((leg) => leg.bucket === 'locked' && leg.accountId === 1)).toBe(false);
    const placedAndCancelled = [lockFunds(7, 'btc', 9n, 'order'), lockFunds(7, 'btc', 9n, 'cancel', true)];
    expect(
      netEntry(
        'batch',
        'nothing moves',
        placedAndCancelled.map((b) => (b.ok ? b.entry : expect.unreachable())),
      ),
    ).toBeUndefined();
  });
});
