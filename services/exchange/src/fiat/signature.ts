import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Signatures of server-to-server messages between the exchange and the payment gateway (both ways):
 * headers `x-paygate-merchant`, `x-paygate-timestamp` (Unix seconds) and `x-paygate-signature` =
 * hex(HMAC-SHA256(merchant secret, "<timestamp>.<raw body>")), computed over the exact bytes sent.
 */
export const MERCHANT_HEADER = 'x-paygate-merchant';
export const TIMESTAMP_HEADER = 'x-paygate-timestamp';
export const SIGNATURE_HEADER = 'x-paygate-signature';

export function signPaygate(secret: string, timestamp: string, body: Buffer | string): string {
  return createHmac('sha256', secret)
    .update(`${timestamp}.`)
    .update(typeof body === 'string' ? Buffer.from(body, 'utf8') : body)
    .digest('hex');
}

/** The three headers of a signed request with `body`, at `nowMs`. */
export function paygateHeaders(
  merchantId: string,
  secret: string,
  body: string,
  nowMs: number,
): Record<string, string> {
  const timestamp = String(Math.floor(nowMs / 1000));
  return {
    [MERCHANT_HEADER]: merchantId,
    [TIMESTAMP_HEADER]: timestamp,
    [SIGNATURE_HEADER]: signPaygate(secret, timestamp, body),
  };
}

export type SignatureCheck =
  | { ok: true }
  | { ok: false; reason: 'missing_headers' | 'unknown_merchant' | 'stale' | 'bad_signature'; detail: string };

export interface SignedMessage {
  /** Header values as received (a repeated header arrives as an array and is refused). */
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly rawBody: Buffer;
}

export interface VerifyOptions {
  readonly merchantId: string;
  readonly secret: string;
  /** Also accepted: the secret before a rotation (the gateway's grace period). @default none */
  readonly previousSecret?: string | undefined;
  readonly nowMs: number;
  /** Largest accepted distance between the timestamp and `nowMs`, in seconds. */
  readonly windowS: number;
}

/** Checks a signed message: the merchant is ours, the timestamp is fresh, the HMAC matches (constant time). */
export function verifyPaygate(message: SignedMessage, options: VerifyOptions): SignatureCheck {
  const merchant = message.headers[MERCHANT_HEADER];
  const timestamp = message.headers[TIMESTAMP_HEADER];
  const signature = message.headers[SIGNATURE_HEADER];
  if (typeof merchant !== 'string' || typeof timestamp !== 'string' || typeof signature !== 'string') {
    return {
      ok: false,
      reason: 'missing_headers',
      detail: `headers ${MERCHANT_HEADER}, ${TIMESTAMP_HEADER} and ${SIGNATURE_HEADER} are required once each`,
    };
  }
  if (merchant !== options.merchantId) {
    return { ok: false, reason: 'unknown_merchant', detail: `unknown merchant "${merchant}"` };
  }
  if (
    !/^\d{1,12}$/.test(timestamp) ||
    Math.abs(Number(timestamp) * 1000 - options.nowMs) > options.windowS * 1000
  ) {
    return {
      ok: false,
      reason: 'stale',
      detail: `${TIMESTAMP_HEADER} must be Unix seconds within ${options.windowS} s of our clock`,
    };
  }
  const given = /^[0-9a-f]{64}$/.test(signature) ? Buffer.from(signature, 'hex') : Buffer.alloc(0);
  const secrets = options.previousSecret ? [options.secret, options.previousSecret] : [options.secret];
  // Every secret is tried (no early exit), so the time taken does not tell which one matched.
  let matched = false;
  for (const secret of secrets) {
    const expected = Buffer.from(signPaygate(secret, timestamp, message.rawBody), 'hex');
    if (given.length === expected.length && timingSafeEqual(given, expected)) matched = true;
  }
  if (!matched) {
    return { ok: false, reason: 'bad_signature', detail: 'the signature does not match the body' };
  }
  return { ok: true };
}
