import { SignJWT } from 'jose';
import { describe, expect, it } from 'vitest';
import { createTokenVerifier } from '../src/auth/token-verifier.js';
import { VerifiedTokens } from '../src/auth/verified-tokens.js';

const alice = { userId: 'alice', member: false };
const bob = { userId: 'bob', member: true };

describe('VerifiedTokens', () => {
  it('serves a token until its expiry, not at it or after', () => {
    const tokens = new VerifiedTokens(10, 60_000);
    tokens.add('t', alice, 10_000, 0);
    expect(tokens.get('t', 9_999)).toEqual(alice);
    expect(tokens.get('t', 10_000)).toBeUndefined();
    expect(tokens.size).toBe(0);
  });

  it('never serves a token longer than its maximum age, with or without exp', () => {
    const tokens = new VerifiedTokens(10, 60_000);
    tokens.add('long', alice, 3_600_000, 1_000);
    tokens.add('no-exp', bob, undefined, 1_000);
    expect(tokens.get('long', 60_999)).toEqual(alice);
    expect(tokens.get('no-exp', 60_999)).toEqual(bob);
    expect(tokens.get('long', 61_000)).toBeUndefined();
    expect(tokens.get('no-exp', 61_000)).toBeUndefined();
  });

  it('keeps nothing already expired, and nothing at all with no room', () => {
    const tokens = new VerifiedTokens(10, 60_000);
    tokens.add('past', alice, 5_000, 5_000);
    expect(tokens.get('past', 5_000)).toBeUndefined();
    const none = new VerifiedTokens(0, 60_000);
    none.add('t', alice, undefined, 0);
    expect(none.get('t', 1)).toBeUndefined();
  });

  it('drops the oldest token beyond its size', () => {
    const tokens = new VerifiedTokens(2, 60_000);
    tokens.add('a', alice, undefined, 0);
    tokens.add('b', bob, undefined, 0);
    tokens.add('a', alice, undefined, 1); // a token added again takes no more room
    tokens.add('c', bob, undefined, 2);
    expect(tokens.size).toBe(2);
    expect(tokens.get('b', 3)).toBeUndefined();
    expect(tokens.get('c', 3)).toEqual(bob);
  });
});

describe('token verifier with verified tokens kept', () => {
  const secret = 'a-test-secret-that-is-at-least-32-bytes-long';
  const sign = (sub: string, exp: number) =>
    new SignJWT({})
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject(sub)
      .setExpirationTime(exp)
      .sign(new TextEncoder().encode(secret));

  it('a token verified once is refused as expired once its exp plus the tolerance has passed', async () => {
    let nowMs = Date.UTC(2026, 0, 1);
    const verifier = createTokenVerifier({
      key: { kind: 'hmac', secret },
      clockToleranceSeconds: 5,
      memberClaim: 'member',
      requireExp: true,
      now: () => new Date(nowMs),
    });
    const token = await sign('alice', nowMs / 1000 + 10);
    expect(await verifier.verify(token)).toEqual({ ok: true, viewer: alice });
    nowMs += 14_000;
    expect(await verifier.verify(token)).toEqual({ ok: true, viewer: alice });
    nowMs += 1_000;
    expect(await verifier.verify(token)).toEqual({ ok: false, reason: 'token expired' });
  });

  it('a refused token stays refused; another valid one is its own entry', async () => {
    const verifier = createTokenVerifier({
      key: { kind: 'hmac', secret },
      clockToleranceSeconds: 0,
      memberClaim: 'member',
      requireExp: true,
    });
    const exp = Math.floor(Date.now() / 1000) + 600;
    const good = await sign('alice', exp);
    const [header, payload] = good.split('.');
    const forged = `${header}.${payload}.${'A'.repeat(43)}`;
    for (let i = 0; i < 2; i++) {
      expect(await verifier.verify(good)).toEqual({ ok: true, viewer: alice });
      expect((await verifier.verify(forged)).ok).toBe(false);
    }
    expect(await verifier.verify(await sign('bob', exp))).toEqual({
      ok: true,
      viewer: { userId: 'bob', member: false },
    });
  });
});
