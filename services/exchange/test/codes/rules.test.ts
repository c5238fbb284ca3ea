import { describe, expect, it } from 'vitest';
import { DEFAULT_FAILURE_LIMITS, retryAfterMs, windowEnded } from '../../src/codes/limits.js';
import {
  CODE_STATUSES,
  type CodeStatus,
  type RedeemableCode,
  redeemRefusal,
  transition,
} from '../../src/codes/rules.js';

const NOW = 1_700_000_000_000;
const code = (changes: Partial<RedeemableCode> = {}): RedeemableCode => ({
  status: 'active',
  ownerId: 1,
  currency: 'btc',
  recipient: 'all',
  nonRefundableBefore: NOW,
  ...changes,
});
const bob = { accountId: 2, svcid: 'BOB' };
const owner = { accountId: 1, svcid: 'OWNER' };

describe('transfer code rules: redemption', () => {
  it('lets anyone redeem an active code for all, the named recipient only otherwise', () => {
    expect(redeemRefusal(code(), bob, 'BTC', NOW)).toBeUndefined();
    expect(redeemRefusal(code({ recipient: 'BOB' }), bob, 'btc', NOW)).toBeUndefined();
    expect(redeemRefusal(code({ recipient: 'CAROL' }), bob, 'BTC', NOW)).toBe('wrong_recipient');
  });

  it('checks the currency token of the code as typed', () => {
    expect(redeemRefusal(code(), bob, 'ETH', NOW)).toBe('currency_mismatch');
  });

  it('refuses by status', () => {
    const expected: Record<CodeStatus, string | undefined> = {
      created: 'unconfirmed',
      processing: 'unconfirmed',
      unconfirmed: 'unconfirmed',
      active: undefined,
      redeeming: 'already_redeemed',
      redeemed: 'already_redeemed',
      onhold: 'on_hold',
      canceled: 'canceled',
    };
    for (const status of CODE_STATUSES)
      expect(redeemRefusal(code({ status }), bob, 'BTC', NOW)).toBe(expected[status]);
  });

  it('lets the owner take the code back from non_refundable_before on, whatever the recipient', () => {
    const later = code({ nonRefundableBefore: NOW + 1, recipient: 'BOB' });
    expect(redeemRefusal(later, owner, 'BTC', NOW)).toBe('not_refundable_yet');
    expect(redeemRefusal(later, owner, 'BTC', NOW + 1)).toBeUndefined();
    expect(redeemRefusal(later, bob, 'BTC', NOW)).toBeUndefined();
  });
});

describe('transfer code rules: operator and confirmation transitions', () => {
  it('holds active and unconfirmed codes and releases them to where they were', () => {
    expect(transition('active', null, 'hold')).toEqual({
      ok: true,
      status: 'onhold',
      heldFrom: 'active',
      refund: false,
    });
    expect(transition('unconfirmed', null, 'hold')).toMatchObject({ ok: true, heldFrom: 'unconfirmed' });
    expect(transition('onhold', 'unconfirmed', 'release')).toEqual({
      ok: true,
      status: 'unconfirmed',
      heldFrom: null,
      refund: false,
    });
    for (const status of ['redeemed', 'canceled', 'onhold'] as const) {
      expect(transition(status, null, 'hold').ok).toBe(false);
    }
    expect(transition('active', null, 'release').ok).toBe(false);
  });

  it('cancels live codes with a refund, nothing else', () => {
    for (const status of CODE_STATUSES) {
      const live = status === 'active' || status === 'unconfirmed' || status === 'onhold';
      const result = transition(status, status === 'onhold' ? 'active' : null, 'cancel');
      expect(result.ok).toBe(live);
      if (result.ok) expect(result).toMatchObject({ status: 'canceled', refund: true });
    }
  });

  it('confirms unconfirmed codes only', () => {
    expect(transition('unconfirmed', null, 'confirm')).toMatchObject({
      ok: true,
      status: 'active',
      refund: false,
    });
    expect(transition('active', null, 'confirm').ok).toBe(false);
    expect(transition('onhold', 'unconfirmed', 'confirm').ok).toBe(false);
  });
});

describe('brute-force limits', () => {
  const limits = { perAccount: 2, perAddress: 3, windowMs: 1_000 };
  it('refuses from failure limit + 1 until the window ends', () => {
    const at = (kind: 'account' | 'address', failures: number) => ({ kind, windowStart: NOW, failures });
    expect(retryAfterMs([at('account', 2), at('address', 3)], limits, NOW + 100)).toBe(0);
    expect(retryAfterMs([at('account', 3), at('address', 1)], limits, NOW + 100)).toBe(900);
    expect(retryAfterMs([at('account', 1), at('address', 4)], limits, NOW + 400)).toBe(600);
    expect(retryAfterMs([at('account', 30)], limits, NOW + 1_000)).toBe(0);
    expect(windowEnded(NOW, 1_000, NOW + 999)).toBe(false);
    expect(windowEnded(NOW, 1_000, NOW + 1_000)).toBe(true);
  });
  it('defaults to 10 per account, 30 per address, 15 minutes', () => {
    expect(DEFAULT_FAILURE_LIMITS).toEqual({ perAccount: 10, perAddress: 30, windowMs: 900_000 });
  });
});
