/**
 * Bearer JWT verification with `jose`: an HMAC secret or a JWKS URL, issuer/audience checked when
 * configured, a clock tolerance, and `sub` as the user id. The outcome is a value, never a throw.
 */
import { webcrypto } from 'node:crypto';
import { isStorableText } from '@platform/http-edge/storable-input';
import {
  createRemoteJWKSet,
  errors,
  type JWTPayload,
  type JWTVerifyGetKey,
  type JWTVerifyOptions,
  jwtVerify,
} from 'jose';
import type { JwtConfig } from '../config.js';
import type { Viewer } from '../domain/access.js';
import { LIMITS } from '../domain/event.js';
import { VerifiedTokens } from './verified-tokens.js';

export type VerifyResult = { ok: true; viewer: Viewer } | { ok: false; reason: string };

export interface TokenVerifier {
  verify(token: string): Promise<VerifyResult>;
}

/** The resolved key material: the dev-secret file is read into `hmac` before this point. */
export type VerifierKey = { kind: 'hmac'; secret: string } | { kind: 'jwks'; url: string };

export interface VerifierOptions extends Omit<JwtConfig, 'auth'> {
  key: VerifierKey;
  /** Clock of the verification, in seconds since the epoch handled by jose. @default the system clock */
  now?: () => Date;
}

const HMAC_ALGORITHMS = ['HS256', 'HS384', 'HS512'];
/** Verified tokens kept (see `VerifiedTokens`): at most this many, each at most this long. */
const VERIFIED_TOKENS_MAX = 10_000;
const VERIFIED_TOKEN_MAX_AGE_MS = 60_000;
// Asymmetric algorithms only: a JWKS must never let an attacker pick HS* with a public key as secret.
const JWKS_ALGORITHMS = [
  'RS256',
  'RS384',
  'RS512',
  'PS256',
  'PS384',
  'PS512',
  'ES256',
  'ES384',
  'ES512',
  'EdDSA',
];

function describe(error: unknown): string {
  if (error instanceof errors.JWTExpired) return 'token expired';
  if (error instanceof errors.JWTClaimValidationFailed) {
    return error.reason === 'missing'
      ? `token claim "${error.claim}" is missing`
      : `token claim "${error.claim}" is not valid`;
  }
  if (error instanceof errors.JWSSignatureVerificationFailed) return 'token signature is not valid';
  if (error instanceof errors.JOSEAlgNotAllowed) return 'token algorithm is not allowed';
  if (error instanceof errors.JWKSNoMatchingKey) return 'no key of the JWKS matches the token';
  if (error instanceof errors.JWKSTimeout || error instanceof errors.JWKSInvalid) {
    return 'the signing keys could not be fetched';
  }
  if (error instanceof errors.JWSInvalid || error instanceof errors.JWTInvalid) return 'token is malformed';
  return 'token is not valid';
}

/**
 * The HMAC secret as one WebCrypto key per algorithm, imported on first use and kept. Given the raw
 * bytes, jose imports a key on every verification (measured: about 4% of the service's CPU on the
 * read/write mix with 5% writes). jose has checked `alg` against `algorithms` before it asks.
 */
function hmacKeys(secret: string): JWTVerifyGetKey {
  const raw = new TextEncoder().encode(secret);
  const keys = new Map<string, Promise<webcrypto.CryptoKey>>();
  return (header) => {
    const alg = header.alg ?? '';
    let key = keys.get(alg);
    if (key === undefined) {
      const hash = `SHA-${alg.slice(2)}`;
      key = webcrypto.subtle.importKey('raw', raw, { name: 'HMAC', hash }, false, ['verify']);
      keys.set(alg, key);
    }
    return key;
  };
}

export function createTokenVerifier(options: VerifierOptions): TokenVerifier {
  let key: JWTVerifyGetKey;
  let algorithms: string[];
  if (options.key.kind === 'hmac') {
    key = hmacKeys(options.key.secret);
    algorithms = HMAC_ALGORITHMS;
  } else {
    key = createRemoteJWKSet(new URL(options.key.url), { timeoutDuration: 5_000, cooldownDuration: 30_000 });
    algorithms = JWKS_ALGORITHMS;
  }
  const verifyOptions: JWTVerifyOptions = {
    algorithms,
    clockTolerance: options.clockToleranceSeconds,
    requiredClaims: options.requireExp ? ['sub', 'exp'] : ['sub'],
  };
  if (options.issuer !== undefined) verifyOptions.issuer = options.issuer;
  if (options.audience !== undefined) verifyOptions.audience = options.audience;

  const toViewer = (payload: JWTPayload): VerifyResult => {
    const sub = payload.sub;
    if (typeof sub !== 'string' || sub.length === 0 || sub.length > LIMITS.userIdMaxLength) {
      return { ok: false, reason: `token "sub" must be a user id of 1-${LIMITS.userIdMaxLength} characters` };
    }
    // A NUL made the write a 500 (PostgreSQL refuses it); an unpaired surrogate was stored as U+FFFD,
    // so the event's creator no longer matched the token that created it (403 on its own event).
    if (!isStorableText(sub)) {
      return { ok: false, reason: 'token "sub" must be valid Unicode text without a NUL character' };
    }
    return { ok: true, viewer: { userId: sub, member: payload[options.memberClaim] === true } };
  };

  const verified = new VerifiedTokens(VERIFIED_TOKENS_MAX, VERIFIED_TOKEN_MAX_AGE_MS);
  return {
    async verify(token) {
      const now = options.now?.();
      const nowMs = now?.getTime() ?? Date.now();
      const known = verified.get(token, nowMs);
      if (known !== undefined) return { ok: true, viewer: known };
      try {
        const opts = now === undefined ? verifyOptions : { ...verifyOptions, currentDate: now };
        const { payload } = await jwtVerify(token, key, opts);
        const result = toViewer(payload);
        if (result.ok) {
          const expiresAtMs =
            payload.exp === undefined ? undefined : (payload.exp + options.clockToleranceSeconds) * 1000;
          verified.add(token, result.viewer, expiresAtMs, nowMs);
        }
        return result;
      } catch (error) {
        return { ok: false, reason: describe(error) };
      }
    },
  };
}
