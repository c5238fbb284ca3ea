import { describe, expect, it } from 'vitest';
import { callbackBackoffMs } from '../../src/domain/backoff.js';
import {
  invoiceCanMove,
  invoiceHasExpired,
  invoiceIsTerminal,
  returnOutcome,
} from '../../src/domain/invoice.js';
import { payoutCanMove, payoutIsDue } from '../../src/domain/payout.js';
import { signBody, verifySignature } from '../../src/domain/signature.js';

describe('invoice state machine', () => {
  it('moves created -> processing -> success|failed|expired and never out of a final state', () => {
    expect(invoiceCanMove('created', 'processing')).toBe(true);
    expect(invoiceCanMove('created', 'success')).toBe(true);
    expect(invoiceCanMove('processing', 'success')).toBe(true);
    expect(invoiceCanMove('processing', 'failed')).toBe(true);
    // A 3-D Secure step that did not pay returns the invoice to the card form (attempts left).
    expect(invoiceCanMove('processing', 'created')).toBe(true);
    for (const final of ['success', 'failed', 'expired'] as const) {
      expect(invoiceIsTerminal(final)).toBe(true);
      for (const to of ['created', 'processing', 'success', 'failed', 'expired'] as const) {
        expect(invoiceCanMove(final, to)).toBe(false);
      }
    }
  });

  it('expires only open invoices whose time is up', () => {
    expect(invoiceHasExpired('created', 1_000, 999)).toBe(false);
    expect(invoiceHasExpired('created', 1_000, 1_000)).toBe(true);
    expect(invoiceHasExpired('processing', 1_000, 2_000)).toBe(true);
    expect(invoiceHasExpired('success', 1_000, 2_000)).toBe(false);
  });

  it('tells the merchant success only for success', () => {
    expect(returnOutcome('success')).toBe('success');
    expect(returnOutcome('failed')).toBe('failed');
    expect(returnOutcome('expired')).toBe('failed');
    expect(returnOutcome('processing')).toBe('pending');
  });
});

describe('payout state machine', () => {
  it('moves processing -> success|failed once', () => {
    expect(payoutCanMove('processing', 'success')).toBe(true);
    expect(payoutCanMove('processing', 'failed')).toBe(true);
    expect(payoutCanMove('success', 'failed')).toBe(false);
    expect(payoutCanMove('failed', 'success')).toBe(false);
    expect(payoutIsDue('processing', 5, 5)).toBe(true);
    expect(payoutIsDue('processing', 5, 4)).toBe(false);
    expect(payoutIsDue('success', 5, 9)).toBe(false);
  });
});

describe('callback backoff', () => {
  it('starts at 1 s, doubles, and stops growing at 5 min', () => {
    expect([1, 2, 3, 4, 5].map((n) => callbackBackoffMs(n))).toEqual([1_000, 2_000, 4_000, 8_000, 16_000]);
    expect(callbackBackoffMs(9)).toBe(256_000);
    expect(callbackBackoffMs(10)).toBe(300_000);
    expect(callbackBackoffMs(1_000)).toBe(300_000);
  });
});

describe('signatures', () => {
  const now = 1_764_000_000_000;
  const ts = String(now / 1000);
  it('verifies HMAC-SHA256 over "<timestamp>.<raw body>" within the window', () => {
    const body = '{"a": 1}';
    const signature = signBody('s3cret-value', Number(ts), body);
    const ok = { secret: 's3cret-value', timestamp: ts, signature, body, nowMs: now, windowSeconds: 300 };
    expect(verifySignature(ok)).toEqual({ ok: true });
    expect(verifySignature({ ...ok, body: '{"a":1}' })).toEqual({ ok: false, reason: 'mismatch' });
    expect(verifySignature({ ...ok, secret: 'other' })).toEqual({ ok: false, reason: 'mismatch' });
    expect(verifySignature({ ...ok, nowMs: now + 301_000 })).toEqual({ ok: false, reason: 'stale' });
    expect(verifySignature({ ...ok, signature: 'zz' })).toEqual({ ok: false, reason: 'malformed' });
    expect(verifySignature({ ...ok, timestamp: undefined })).toEqual({ ok: false, reason: 'malformed' });
  });
});
