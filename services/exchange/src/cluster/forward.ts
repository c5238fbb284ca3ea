import http2 from 'node:http2';
import type { AddressInfo } from 'node:net';
import type { DeferredNonce } from '../http/request-context.js';
import type { OrderOutcome, OrderRequest } from '../orders/requests.js';
import { decodeWire, encodeWire, signWire, verifyWire } from './wire.js';

/**
 * Order entry between the nodes of a cluster: a node that does not write a market sends the
 * request (already authenticated, its nonce still unrecorded) to the node that does, over HTTP/2
 * (h2c) at that node's NODE_URL, signed with a key derived from MASTER_KEY. The owner queues it at
 * its writer exactly as a local request, so the nonce is recorded in the owner's batch, and answers
 * the outcome, which the first node's route formats as it would its own.
 */

export const FORWARD_PATH = '/cluster/v1/order';

/** What a node sends. */
export interface ForwardedRequest {
  readonly market: string;
  readonly request: OrderRequest;
  readonly nonce?: { readonly keyId: number; readonly protocol: 'v2' | 'v3'; readonly value: number };
}

/** What the owner answers. `not_owner`: it did not queue the request (safe to send elsewhere). */
export type ForwardAnswer =
  | { readonly kind: 'outcome'; readonly outcome: OrderOutcome; readonly consumed: boolean }
  | { readonly kind: 'not_owner' }
  /** It was queued but its outcome is unknown (the owner lost its database meanwhile). */
  | { readonly kind: 'unknown' }
  | { readonly kind: 'error'; readonly message: string };

/** The owner side: runs a forwarded request here, or says it is not the owner. */
export type LocalEntry = (
  forwarded: ForwardedRequest,
  nonce: DeferredNonce | undefined,
) => Promise<ForwardAnswer>;

/** Listens for forwarded requests at `port` on `host` (0: a free port, returned); close it with the returned function. */
export async function startForwardServer(options: {
  readonly host: string;
  readonly port: number;
  readonly key: Buffer;
  readonly entry: LocalEntry;
  readonly onError: (error: unknown) => void;
}): Promise<{ readonly port: number; close: () => Promise<void> }> {
  const server = http2.createServer();
  server.on('stream', (stream, headers) => {
    stream.on('error', () => {});
    if (headers[':method'] !== 'POST' || headers[':path'] !== FORWARD_PATH) {
      stream.respond({ ':status': 404 });
      stream.end();
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    stream.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= 65_536) chunks.push(chunk);
    });
    stream.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const time = Number(headers['x-cluster-time']);
      const signature = String(headers['x-cluster-signature'] ?? '');
      if (size > 65_536 || !verifyWire(options.key, time, body, signature, Date.now())) {
        stream.respond({ ':status': 401 });
        stream.end();
        return;
      }
      void (async () => {
        let answer: ForwardAnswer;
        try {
          const forwarded = decodeWire<ForwardedRequest>(body);
          const nonce: DeferredNonce | undefined = forwarded.nonce
            ? { ...forwarded.nonce, consumed: false }
            : undefined;
          answer = await options.entry(forwarded, nonce);
        } catch (error) {
          options.onError(error);
          answer = { kind: 'error', message: 'the owner failed to run the request' };
        }
        if (stream.destroyed) return;
        stream.respond({ ':status': 200, 'content-type': 'application/json' });
        stream.end(encodeWire(answer));
      })();
    });
  });
  server.on('sessionError', () => {});
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        // Open sessions would keep close waiting: the nodes reconnect.
        setTimeout(resolve, 1_000).unref();
      }),
  };
}

/** Why a forward did not get an answer. */
export class ForwardFailed extends Error {
  constructor(
    message: string,
    /** The request may have reached the owner (its outcome is unknown). */
    readonly maybeSent: boolean,
  ) {
    super(message);
    this.name = 'ForwardFailed';
  }
}

/** The sending side: one HTTP/2 session per owner, opened on first use and again after a failure. */
export class ForwardClient {
  private readonly sessions = new Map<string, http2.ClientHttp2Session>();

  constructor(
    private readonly key: Buffer,
    private readonly timeoutMs = 10_000,
  ) {}

  private session(url: string): http2.ClientHttp2Session {
    const open = this.sessions.get(url);
    if (open && !open.closed && !open.destroyed) return open;
    const session = http2.connect(url);
    session.on('error', () => this.sessions.delete(url));
    session.on('close', () => this.sessions.delete(url));
    session.on('goaway', () => this.sessions.delete(url));
    session.unref();
    this.sessions.set(url, session);
    return session;
  }

  /** Sends one request to the node at `url`; ForwardFailed says whether it may have been run there. */
  send(url: string, forwarded: ForwardedRequest): Promise<ForwardAnswer> {
    const body = encodeWire(forwarded);
    const time = Date.now();
    return new Promise((resolve, reject) => {
      let session: http2.ClientHttp2Session;
      try {
        session = this.session(url);
      } catch (error) {
        reject(new ForwardFailed(`cannot reach ${url}: ${(error as Error).message}`, false));
        return;
      }
      // Until the session is connected nothing was sent: a failure then is safe to try elsewhere.
      // (Listened to only while connecting: a listener per request on an open session would pile up.)
      let connected = !session.connecting;
      if (!connected) {
        session.once('connect', () => {
          connected = true;
        });
      }
      const stream = session.request({
        ':method': 'POST',
        ':path': FORWARD_PATH,
        'content-type': 'application/json',
        'x-cluster-time': String(time),
        'x-cluster-signature': signWire(this.key, time, body),
      });
      const chunks: Buffer[] = [];
      let status = 0;
      stream.setTimeout(this.timeoutMs, () => stream.close(http2.constants.NGHTTP2_CANCEL));
      stream.on('response', (headers) => {
        status = Number(headers[':status']);
      });
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        // Node ends a stream closed without an answer too (no 'error'): when the owner's session goes
        // away (its process killed: a FIN rather than an RST) and on the timeout's CANCEL. The owner
        // may have run the request then: sent again, it would be refused as a reused nonce (or run
        // twice), so only a status the owner sent says it was not run.
        if (status === 0) {
          reject(new ForwardFailed(`${url} closed the stream without an answer`, connected));
          return;
        }
        if (status !== 200) {
          reject(new ForwardFailed(`${url} answered ${status}`, false));
          return;
        }
        try {
          resolve(decodeWire<ForwardAnswer>(Buffer.concat(chunks).toString('utf8')));
        } catch {
          reject(new ForwardFailed(`${url} answered an unreadable body`, true));
        }
      });
      stream.on('error', (error) => reject(new ForwardFailed(`${url}: ${error.message}`, connected)));
      stream.on('close', () => {
        if (status === 0) reject(new ForwardFailed(`${url} closed the stream without an answer`, connected));
      });
      stream.end(body);
    });
  }

  close(): void {
    for (const session of this.sessions.values()) session.destroy();
    this.sessions.clear();
  }
}
