import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { authorizationScope } from './key.js';

/**
 * The cache scope of a caller. By default a hash of the whole Authorization header, so a rotated
 * token starts a new, empty scope. With CACHE_SCOPE_CLAIM, a bearer JWT whose HMAC signature verifies
 * with CACHE_SCOPE_JWT_SECRET (and which has not expired) is scoped by that claim (`sub`, a tenant
 * id...), so a user's rotating tokens keep their hits. The signature must verify: an unverified claim
 * would let anyone read another user's cached answers by writing that user's id into a token. A
 * token that does not verify falls back to the header hash, never to the claim.
 */

const ALGORITHMS: Readonly<Record<string, string>> = { HS256: 'sha256', HS384: 'sha384', HS512: 'sha512' };
const MEMO_MAX = 10_000;

export interface ScopeOptions {
  readonly claim: string | undefined;
  readonly secret: string | undefined;
}

export class ScopeResolver {
  /** Verified tokens: the scope and when it stops being valid (ms). */
  private readonly memo = new Map<string, { scope: string; until: number }>();

  constructor(
    private readonly options: ScopeOptions,
    private readonly clock: () => number,
  ) {}

  /** True when the scope is shared by every anonymous caller (`private` answers are not stored in it). */
  static isShared(scope: string): boolean {
    return scope === 'public';
  }

  scopeOf(authorization: string | undefined): string {
    const { claim, secret } = this.options;
    if (claim === undefined || secret === undefined || authorization === undefined) {
      return authorizationScope(authorization);
    }
    const now = this.clock();
    const known = this.memo.get(authorization);
    if (known && known.until > now) return known.scope;
    const verified = this.verify(authorization, claim, secret, now);
    if (verified === undefined) return authorizationScope(authorization);
    if (this.memo.size >= MEMO_MAX) this.memo.clear();
    this.memo.set(authorization, verified);
    return verified.scope;
  }

  private verify(
    authorization: string,
    claim: string,
    secret: string,
    now: number,
  ): { scope: string; until: number } | undefined {
    const match = /^Bearer\s+([\w-]+)\.([\w-]+)\.([\w-]+)$/i.exec(authorization);
    if (!match) return undefined;
    const [, header = '', payload = '', signature = ''] = match;
    let alg: string | undefined;
    let claims: Record<string, unknown>;
    try {
      alg = (JSON.parse(Buffer.from(header, 'base64url').toString('utf8')) as { alg?: string }).alg;
      claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as Record<string, unknown>;
    } catch {
      return undefined;
    }
    const hash = alg ? ALGORITHMS[alg] : undefined;
    if (!hash || claims === null || typeof claims !== 'object') return undefined;
    const expected = createHmac(hash, secret).update(`${header}.${payload}`).digest();
    const given = Buffer.from(signature, 'base64url');
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
    const exp = typeof claims['exp'] === 'number' ? claims['exp'] * 1000 : Number.POSITIVE_INFINITY;
    if (exp <= now) return undefined;
    if (typeof claims['nbf'] === 'number' && claims['nbf'] * 1000 > now) return undefined;
    const value = claims[claim];
    if (typeof value !== 'string' && typeof value !== 'number') return undefined;
    const scope = `claim:${createHash('sha256')
      .update(`${claim}=${String(value)}`)
      .digest('hex')
      .slice(0, 32)}`;
    return { scope, until: Math.min(exp, now + 60_000) };
  }
}
