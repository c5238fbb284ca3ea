import { createHmac } from 'node:crypto';

/**
 * Client-side signing written from the reference page, independently of src/auth/signature.ts,
 * the way an existing client library builds its requests.
 */
export function clientSignV3(secret: string, path: string, nonce: string, body: string): string {
  return createHmac('sha384', secret).update(`${path}${nonce}${body}`).digest('hex');
}

export function clientSignV2(
  secret: string,
  verb: string,
  uri: string,
  params: Record<string, string>,
): string {
  const query = Object.entries(params)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([k, v]) => `${k}=${v}`)
    .join('&');
  return createHmac('sha256', secret).update(`${verb}|${uri}|${query}`).digest('hex');
}

let last = 0;
/** Strictly increasing millisecond nonces, close to the real clock. */
export function nextNonce(): string {
  last = Math.max(Date.now(), last + 1);
  return String(last);
}

export function v3Headers(apiKey: string, secret: string, path: string, body: string, nonce = nextNonce()) {
  return {
    'content-type': 'application/json',
    accept: 'application/json',
    'svc-nonce': nonce,
    'svc-apikey': apiKey,
    'svc-signature': clientSignV3(secret, path, nonce, body),
  };
}
