import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Request signatures of the two API generations (pure functions).
 * v3: hex(HMAC-SHA384(secret, apiPath + nonce + body)), body = raw request bytes, `{}` when absent.
 * v2: hex(HMAC-SHA256(secret, VERB|URI|canonical)), canonical = params except `signature`, sorted
 *     by key, `k=v` joined with `&`, values not URL-escaped (Peatio convention).
 */

export function v3Message(apiPath: string, nonce: string, body: Buffer | string | undefined): Buffer {
  const payload = body === undefined || body.length === 0 ? '{}' : body;
  return Buffer.concat([Buffer.from(apiPath + nonce, 'utf8'), Buffer.from(payload)]);
}

export function signV3(secret: string, apiPath: string, nonce: string, body?: Buffer | string): string {
  return createHmac('sha384', secret)
    .update(v3Message(apiPath, nonce, body))
    .digest('hex');
}

export function v2Canonical(params: Readonly<Record<string, string>>): string {
  return Object.keys(params)
    .filter((key) => key !== 'signature')
    .sort()
    .map((key) => `${key}=${params[key]}`)
    .join('&');
}

export function signV2(
  secret: string,
  verb: string,
  uri: string,
  params: Readonly<Record<string, string>>,
): string {
  return createHmac('sha256', secret)
    .update(`${verb.toUpperCase()}|${uri}|${v2Canonical(params)}`)
    .digest('hex');
}

/**
 * Compares a presented hex signature with the expected one in constant time. Lower-case hex only, as
 * the signature is documented: one request has one signature, so an upper-case copy is refused.
 */
export function signatureMatches(expectedHex: string, presented: string): boolean {
  if (!/^[0-9a-f]*$/.test(presented) || presented.length !== expectedHex.length) return false;
  return timingSafeEqual(Buffer.from(expectedHex, 'hex'), Buffer.from(presented, 'hex'));
}

export type NonceCheck = 'ok' | 'malformed' | 'out_of_window';

/** A nonce is a positive integer of milliseconds within `windowMs` of server time, either side. */
export function checkNonce(raw: string, nowMs: number, windowMs: number): NonceCheck {
  if (!/^\d{1,16}$/.test(raw)) return 'malformed';
  return Math.abs(Number(raw) - nowMs) <= windowMs ? 'ok' : 'out_of_window';
}
