import { describe, expect, it } from 'vitest';
import { canonicalJson, decideKey, isValidKey } from '../../src/idempotency/decide.js';

const request = { route: '/merchant-api/payouts', fingerprint: 'f1' };
const stored = { ...request, status: 201, lockedUntilMs: 1_000, expiresAtMs: 10_000 };

describe('decideKey', () => {
  it('runs a new or expired key', () => {
    expect(decideKey(undefined, request, 0).kind).toBe('run');
    expect(decideKey(stored, request, 10_000).kind).toBe('run');
  });
  it('replays a finished answer with the same parameters', () => {
    expect(decideKey(stored, request, 5_000).kind).toBe('replay');
  });
  it('refuses other parameters or another route under the key', () => {
    expect(decideKey(stored, { ...request, fingerprint: 'f2' }, 5_000).kind).toBe('reused');
    expect(decideKey(stored, { ...request, route: '/merchant-api/refunds' }, 5_000).kind).toBe('reused');
  });
  it('refuses while the first request runs, and lets a retry take over once its lock is past', () => {
    const running = { ...stored, status: null };
    expect(decideKey(running, request, 500).kind).toBe('in_use');
    expect(decideKey(running, request, 1_000).kind).toBe('run');
  });
});

describe('keys and fingerprints', () => {
  it('accepts 1-255 visible ASCII characters only', () => {
    expect(isValidKey('a')).toBe(true);
    expect(isValidKey('x'.repeat(255))).toBe(true);
    expect(isValidKey('x'.repeat(256))).toBe(false);
    expect(isValidKey('')).toBe(false);
    expect(isValidKey('a b')).toBe(false);
    expect(isValidKey('ключ')).toBe(false);
  });
  it('ignores key order', () => {
    expect(canonicalJson({ b: 1, a: { d: [1, { f: 2, e: 3 }], c: null } })).toBe(
      canonicalJson({ a: { c: null, d: [1, { e: 3, f: 2 }] }, b: 1 }),
    );
    expect(canonicalJson({ a: '1' })).not.toBe(canonicalJson({ a: 1 }));
  });
});
