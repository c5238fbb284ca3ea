/**
 * Sends a raw request with node:http so that nothing is normalised on the way: header names may
 * repeat, bodies may be any bytes, the request target is sent as given.
 */
import http from 'node:http';
import type { RequestDraft } from './requests.js';

export interface RawResponse {
  readonly status: number;
  readonly headers: http.IncomingHttpHeaders;
  readonly text: string;
}

export function sendRaw(baseUrl: string, draft: RequestDraft, timeoutMs = 10_000): Promise<RawResponse> {
  const url = new URL(baseUrl);
  const flat: string[] = ['host', url.host];
  for (const [name, value] of draft.headers) flat.push(name, value);
  if (draft.body !== undefined) flat.push('content-length', String(draft.body.length));
  return new Promise((resolve, reject) => {
    const request = http.request(
      {
        host: url.hostname,
        port: url.port,
        method: draft.method,
        path: draft.target,
        headers: flat,
        agent: false,
        timeout: timeoutMs,
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () =>
          resolve({
            status: response.statusCode ?? 0,
            headers: response.headers,
            text: Buffer.concat(chunks).toString('utf8'),
          }),
        );
        response.on('error', reject);
      },
    );
    request.on('timeout', () => request.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    request.on('error', reject);
    request.end(draft.body);
  });
}
