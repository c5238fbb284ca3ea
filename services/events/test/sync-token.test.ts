/** Sync tokens: sealed positions (pure), and when one may still be used. */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  checkPosition,
  openToken,
  type SyncPosition,
  sealToken,
  TOKEN_MAX_LENGTH,
} from '../src/sync/sync-token.js';

const key = randomBytes(32);
const positions: SyncPosition[] = [
  { kind: 'sync', seq: 42n, viewer: 'a', issuedAt: 1_700_000_000 },
  { kind: 'full', upto: 9_007_199_254_740_993n, after: 'ev-1', viewer: 'u:alice', issuedAt: 1 },
  { kind: 'delta', from: 3n, upto: 10n, after: 7n, viewer: 'm', issuedAt: 2 },
];

describe('sync tokens', () => {
  it('open to the position they were sealed with, beyond 2^53 too, and are opaque', () => {
    for (const position of positions) {
      const token = sealToken(position, key);
      expect(token).toMatch(/^[A-Za-z0-9_-]+$/);
      expect(token.length).toBeLessThanOrEqual(TOKEN_MAX_LENGTH);
      expect(openToken(token, key)).toEqual(position);
      // The change number is not readable in the token.
      expect(Buffer.from(token, 'base64url').toString('latin1')).not.toContain('"s":"42"');
    }
    // Two seals of one position differ (random IV).
    expect(sealToken(positions[0]!, key)).not.toBe(sealToken(positions[0]!, key));
  });

  it('are refused when edited, truncated, sealed with another key, too long or not base64url', () => {
    const token = sealToken(positions[0]!, key);
    const flipped = `${token.slice(0, 20)}${token[20] === 'A' ? 'B' : 'A'}${token.slice(21)}`;
    for (const bad of [
      flipped,
      token.slice(0, -2),
      '',
      'x',
      'a'.repeat(TOKEN_MAX_LENGTH + 1),
      `${token}=`,
      '../..',
      'ÿ',
    ]) {
      expect(openToken(bad, key), bad.slice(0, 30)).toBeUndefined();
    }
    expect(openToken(token, randomBytes(32))).toBeUndefined();
    // Every other last character, including ones that differ only in unused bits.
    for (const last of 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_') {
      if (last !== token.at(-1)) expect(openToken(`${token.slice(0, -1)}${last}`, key)).toBeUndefined();
    }
  });

  it('are usable by the same view, within the retention, and not before the pruned part of the log', () => {
    const position = positions[0]!;
    const context = { viewer: 'a', nowSeconds: position.issuedAt + 100, retentionSeconds: 100, pruned: 42n };
    expect(checkPosition(position, context)).toEqual({ ok: true });
    expect(checkPosition(position, { ...context, viewer: 'u:alice' }).ok).toBe(false);
    expect(checkPosition(position, { ...context, nowSeconds: position.issuedAt + 101 }).ok).toBe(false);
    expect(checkPosition(position, { ...context, pruned: 43n }).ok).toBe(false);
    // A delta page relies on its start, a full sync on its end.
    expect(
      checkPosition(positions[2]!, { viewer: 'm', nowSeconds: 2, retentionSeconds: 1, pruned: 4n }).ok,
    ).toBe(false);
    expect(
      checkPosition(positions[1]!, { viewer: 'u:alice', nowSeconds: 1, retentionSeconds: 1, pruned: 4n }).ok,
    ).toBe(true);
  });
});
