/**
 * Tokens already verified, so a client sending the same bearer token on every request pays for the
 * signature check once (as Envoy's `jwt_authn` keeps a JWT cache). Only successful verifications are
 * kept. An entry is good while the token is: until its `exp` plus the clock tolerance, and never
 * longer than `maxAgeMs`, so a key taken out of a JWKS stops being honoured within that time. Nothing
 * else a verification checks changes with time once it has passed (`nbf` lies in the past).
 *
 * Pure: the clock is an argument of every call. Oldest entries are dropped first beyond `maxEntries`.
 */
import type { Viewer } from '../domain/access.js';

interface Entry {
  viewer: Viewer;
  /** Milliseconds since the epoch after which the entry is no longer used. */
  goodUntilMs: number;
}

export class VerifiedTokens {
  private readonly entries = new Map<string, Entry>();

  constructor(
    private readonly maxEntries: number,
    private readonly maxAgeMs: number,
  ) {}

  /** The viewer of `token` if it was verified and is still good at `nowMs`. */
  get(token: string, nowMs: number): Viewer | undefined {
    const entry = this.entries.get(token);
    if (entry === undefined) return undefined;
    if (nowMs < entry.goodUntilMs) return entry.viewer;
    this.entries.delete(token);
    return undefined;
  }

  /**
   * Remembers a token verified at `nowMs`. `expiresAtMs` is its `exp` plus the clock tolerance, or
   * undefined for a token without `exp`.
   */
  add(token: string, viewer: Viewer, expiresAtMs: number | undefined, nowMs: number): void {
    if (this.maxEntries <= 0) return;
    const goodUntilMs = Math.min(expiresAtMs ?? Number.POSITIVE_INFINITY, nowMs + this.maxAgeMs);
    if (goodUntilMs <= nowMs) return;
    this.entries.delete(token); // added again: now the newest
    if (this.entries.size >= this.maxEntries) {
      const oldest = this.entries.keys().next();
      if (!oldest.done) this.entries.delete(oldest.value);
    }
    this.entries.set(token, { viewer, goodUntilMs });
  }

  get size(): number {
    return this.entries.size;
  }
}
