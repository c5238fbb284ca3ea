import { createHmac } from 'node:crypto';

/** Headers of a merchant API call, signed as gateway-contract.md says (built here, not with the gateway's code). */
export function signedHeaders(
  secret: string,
  body: string,
  options: { merchant?: string; timestamp?: number } = {},
): Record<string, string> {
  const timestamp = options.timestamp ?? Math.floor(Date.now() / 1000);
  return {
    'content-type': 'application/json',
    'x-paygate-merchant': options.merchant ?? 'exchange',
    'x-paygate-timestamp': String(timestamp),
    'x-paygate-signature': createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex'),
  };
}

/** POSTs a signed merchant API call and returns status and JSON. */
export async function merchantPost(
  baseUrl: string,
  path: string,
  payload: unknown,
  secret: string,
  options: { merchant?: string; timestamp?: number } = {},
): Promise<{ status: number; json: Record<string, unknown> }> {
  const body = JSON.stringify(payload);
  const response = await fetch(`${baseUrl}${path}`, {
    method: 'POST',
    headers: signedHeaders(secret, body, options),
    body,
  });
  return { status: response.status, json: (await response.json()) as Record<string, unknown> };
}
