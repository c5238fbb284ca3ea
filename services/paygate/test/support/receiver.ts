import { createHmac } from 'node:crypto';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One callback as the receiver saw it, with its signature checked independently of the gateway's code. */
export interface ReceivedCallback {
  readonly body: Record<string, unknown>;
  readonly raw: string;
  readonly headers: IncomingMessage['headers'];
  readonly signatureValid: boolean;
  readonly answered: number;
}

export interface Receiver {
  readonly url: string;
  readonly port: number;
  /** Every request received, acknowledged or not. */
  readonly received: ReceivedCallback[];
  /** The status the next request gets; called with the 1-based number of the request. */
  respond: (n: number, body: Record<string, unknown>) => number;
  /** Resolves once `predicate` holds over the received list (polling), or throws after `timeoutMs`. */
  waitFor(predicate: (received: readonly ReceivedCallback[]) => boolean, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

/** A real HTTP server standing in for the merchant's callback URL. */
export async function startReceiver(secret: string, port = 0): Promise<Receiver> {
  const received: ReceivedCallback[] = [];
  const receiver = {
    received,
    respond: (_n: number, _body: Record<string, unknown>) => 200,
  } as Receiver & { respond: Receiver['respond'] };
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      const timestamp = String(request.headers['x-paygate-timestamp'] ?? '');
      const expected = createHmac('sha256', secret).update(`${timestamp}.${raw}`).digest('hex');
      const fresh = Math.abs(Date.now() / 1000 - Number(timestamp)) <= 300;
      let body: Record<string, unknown> = {};
      try {
        body = JSON.parse(raw) as Record<string, unknown>;
      } catch {
        // kept empty: the test sees signatureValid and raw
      }
      const status = receiver.respond(received.length + 1, body);
      received.push({
        body,
        raw,
        headers: request.headers,
        signatureValid: fresh && request.headers['x-paygate-signature'] === expected,
        answered: status,
      });
      response.writeHead(status, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const actual = (server.address() as AddressInfo).port;
  return Object.assign(receiver, {
    url: `http://127.0.0.1:${actual}/callback`,
    port: actual,
    async waitFor(predicate: (r: readonly ReceivedCallback[]) => boolean, timeoutMs = 15_000) {
      const deadline = Date.now() + timeoutMs;
      while (!predicate(received)) {
        if (Date.now() > deadline) {
          throw new Error(
            `callbacks not received in time; got ${JSON.stringify(received.map((r) => r.body))}`,
          );
        }
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  });
}
