import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Server-to-server signatures (gateway-contract.md): hex(HMAC-SHA256(secret, "<timestamp>.<raw body>")),
 * the timestamp in Unix seconds, accepted within `windowSeconds` of the receiver's clock.
 */
export function signBody(secret: string, timestampSeconds: number, body: string | Buffer): string {
  return createHmac('sha256', secret).update(`${timestampSeconds}.`).update(body).digest('hex');
}

export type SignatureCheck =
  | { readonly ok: true }
  | { readonly ok: false; readonly reason: 'malformed' | 'stale' | 'mismatch' };

export function verifySignature(input: {
  secret: string;
  timestamp: string | undefined;
  signature: string | undefined;
  body: string | Buffer;
  nowMs: number;
  windowSeconds: number;
}): SignatureCheck {
  const { timestamp, signature } = input;
  if (!timestamp || !/^\d{1,12}$/.test(timestamp) || !signature || !/^[0-9a-f]{64}$/.test(signature)) {
    return { ok: false, reason: 'malformed' };
  }
  const seconds = Number(timestamp);
  if (Math.abs(input.nowMs / 1000 - seconds) > input.windowSeconds) return { ok: false, reason: 'stale' };
  const expected = Buffer.from(signBody(input.secret, seconds, input.body), 'hex');
  const given = Buffer.from(signature, 'hex');
  return timingSafeEqual(expected, given) ? { ok: true } : { ok: false, reason: 'mismatch' };
}
