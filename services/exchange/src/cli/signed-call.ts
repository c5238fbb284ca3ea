import { createHmac } from 'node:crypto';

/** An API key as `demo-api-key.json` holds it. */
export interface ApiCredentials {
  readonly apiKey: string;
  readonly apiSecret: string;
}

export interface SignedCall {
  readonly method: string;
  /** Path with an optional query string, e.g. `/v3/auth/r/wallets`. */
  readonly path: string;
  /** Raw body; a signed call without one is sent and signed as `{}` (README, Authentication). */
  readonly body: string | undefined;
}

let lastNonce = 0;

/**
 * The headers of a v3 private call: `svc-nonce` (milliseconds, strictly increasing), `svc-apikey`,
 * `svc-signature` = hex(HMAC-SHA384(secret, path without query + nonce + raw body)).
 */
export function v3SignatureHeaders(key: ApiCredentials, path: string, body: string, now = Date.now()) {
  lastNonce = Math.max(now, lastNonce + 1);
  const nonce = String(lastNonce);
  const signature = createHmac('sha384', key.apiSecret)
    .update(`${path.split('?')[0]}${nonce}${body}`)
    .digest('hex');
  return { 'svc-nonce': nonce, 'svc-apikey': key.apiKey, 'svc-signature': signature };
}

/** Whether the exchange wants this path signed the v3 way (`/v3/auth/...`, `/v3/order/...`). */
export function isSignedV3Path(path: string): boolean {
  return /^\/v3\/(auth|order)(\/|$)/.test(path.split('?')[0] ?? '');
}

/** Sends one call to `baseUrl`, signed with `key` when the path is a private v3 one. */
export async function sendCall(
  baseUrl: string,
  call: SignedCall,
  key: ApiCredentials | undefined,
): Promise<{ status: number; body: string }> {
  const signed = isSignedV3Path(call.path);
  const body = call.body ?? (signed ? '{}' : undefined);
  const headers: Record<string, string> = { accept: 'application/json' };
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (signed) {
    if (!key) throw new Error(`${call.path} is signed: give a key (--key-file)`);
    Object.assign(headers, v3SignatureHeaders(key, call.path, body ?? '{}'));
  }
  const response = await fetch(`${baseUrl.replace(/\/+$/, '')}${call.path}`, {
    method: call.method,
    headers,
    ...(body !== undefined && call.method !== 'GET' && call.method !== 'HEAD' ? { body } : {}),
  });
  return { status: response.status, body: await response.text() };
}
