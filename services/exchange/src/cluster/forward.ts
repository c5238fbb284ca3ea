import http2 from 'node:http2';
import type { AddressInfo } from 'node:net';
import { databaseUnreachable } from '../db/unreachable.js';
import type { DeferredNonce } from '../http/request-context.js';
import type { OrderOutcome, OrderRequest } from '../orders/requests.js';
import { decodeWire, encodeWire, signWire, verifyWire } from './wire.js';

/**
 * Order entry between the nodes of a cluster: a node that does not write a market sends the
 * request (already authenticated, its nonce still unrecorded) to the node that does, over HTTP/2
 * (h2c) at that node's NODE_URL, signed with a key derived from MASTER_KEY. The owner queues it at
 * its writer exactly as a local request, so the nonce is recorded in the owner's batch, and answers
 * the outcome, which the first node's route formats as it would its own.
 *
 * Each node keeps one long-lived HTTP/2 stream (a "channel") open to each owner and sends its
 * requests on it as lines, each answered by a line with the request's number, in any order (as a
 * gRPC bidirectional stream carries messages). A stream per request cost about 150 µs more CPU per
 * forward across both processes (Node's per-stream objects, headers and timers; measured with a
 * bare client and server on this machine: 198 µs against 44 µs per round trip, one at a time),
 * which on the two shared cores was the largest part of a forwarded order's extra latency.
 *
 * Lines, each ending in "\n" (JSON text never holds a raw newline):
 * - request: `<number> <time ms> <signature> <body>`, body = encodeWire(ForwardedRequest), signed
 *   with the time (signWire), so every request is authenticated on its own;
 * - answer: `<number> <status> <body>`: 200 with encodeWire(ForwardAnswer), or 401 when the request
 *   was not run because its signature did not verify.
 */

export const FORWARD_PATH = '/cluster/v2/orders';

/** Longest line accepted (a request is a few hundred bytes). */
const MAX_LINE = 65_536;

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

/** Splits a stream's text into lines; `undefined` once a line grew past MAX_LINE. */
class LineReader {
  private rest = '';

  push(text: string): string[] | undefined {
    const lines = (this.rest + text).split('\n');
    this.rest = lines.pop() ?? '';
    if (this.rest.length > MAX_LINE || lines.some((line) => line.length > MAX_LINE)) return undefined;
    return lines;
  }
}

/** `count` fields separated by single spaces, the last one taking the rest of the line. */
function fields(line: string, count: number): string[] | undefined {
  const parts: string[] = [];
  let from = 0;
  for (let i = 1; i < count; i += 1) {
    const space = line.indexOf(' ', from);
    if (space < 0) return undefined;
    parts.push(line.slice(from, space));
    from = space + 1;
  }
  parts.push(line.slice(from));
  return parts;
}

/**
 * Listens for forwarded requests at `port` on `host` (0: a free port, returned); close it with the
 * returned function.
 */
export async function startForwardServer(options: {
  readonly host: string;
  readonly port: number;
  readonly key: Buffer;
  readonly entry: LocalEntry;
  readonly onError: (error: unknown) => void;
}): Promise<{ readonly port: number; close: () => Promise<void> }> {
  const server = http2.createServer();
  const channels = new Set<http2.ServerHttp2Stream>();
  server.on('stream', (stream, headers) => {
    stream.on('error', () => {});
    if (headers[':method'] !== 'POST' || headers[':path'] !== FORWARD_PATH) {
      stream.respond({ ':status': 404 });
      stream.end();
      return;
    }
    channels.add(stream);
    stream.on('close', () => channels.delete(stream));
    stream.respond({ ':status': 200, 'content-type': 'text/plain' });
    stream.setEncoding('utf8');
    const reader = new LineReader();
    const answer = (number: string, status: number, body: string) => {
      if (!stream.destroyed && stream.writable) stream.write(`${number} ${status} ${body}\n`);
    };
    stream.on('data', (text: string) => {
      const lines = reader.push(text);
      if (!lines) {
        stream.close(http2.constants.NGHTTP2_PROTOCOL_ERROR);
        return;
      }
      for (const line of lines) {
        const [number = '', time = '', signature = '', body = ''] = fields(line, 4) ?? [];
        if (!/^[0-9]{1,15}$/.test(number)) {
          stream.close(http2.constants.NGHTTP2_PROTOCOL_ERROR);
          return;
        }
        if (!verifyWire(options.key, Number(time), body, signature, Date.now())) {
          answer(number, 401, '{}');
          continue;
        }
        void (async () => {
          let result: ForwardAnswer;
          try {
            const forwarded = decodeWire<ForwardedRequest>(body);
            const nonce: DeferredNonce | undefined = forwarded.nonce
              ? { ...forwarded.nonce, consumed: false }
              : undefined;
            result = await options.entry(forwarded, nonce);
          } catch (error) {
            if (databaseUnreachable(error)) {
              // The owner lost its database under the request: whether its batch committed is not
              // known, so the first node answers 503 and never sends it again (as the owner's own
              // route answers 503 for it), not 500.
              result = { kind: 'unknown' };
            } else {
              options.onError(error);
              result = { kind: 'error', message: 'the owner failed to run the request' };
            }
          }
          answer(number, 200, encodeWire(result));
        })();
      }
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
        // The channels stay open otherwise (a node closes after handing its markets over, so no
        // answer is due on them); the other nodes open new ones to the next owners.
        for (const channel of channels) channel.end();
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

interface Waiting {
  readonly resolve: (answer: ForwardAnswer) => void;
  readonly reject: (error: ForwardFailed) => void;
  readonly timer: NodeJS.Timeout;
}

/** One node's channel to one owner: its stream and the requests waiting for their answers. */
class Channel {
  readonly waiting = new Map<number, Waiting>();
  private readonly reader = new LineReader();
  /** Whether the session connected: until then nothing was sent, so a failure is safe to retry. */
  private connected: boolean;
  private ended = false;
  private status = 0;

  constructor(
    readonly url: string,
    readonly session: http2.ClientHttp2Session,
    readonly stream: http2.ClientHttp2Stream,
    private readonly onEnd: (channel: Channel) => void,
  ) {
    this.connected = !session.connecting;
    if (!this.connected) session.once('connect', () => (this.connected = true));
    stream.setEncoding('utf8');
    stream.on('response', (headers) => {
      this.status = Number(headers[':status']);
      // Answered with another status (not a node of this version, or not this path): nothing ran.
      if (this.status !== 200) this.fail(`${url} answered ${this.status}`, false);
    });
    stream.on('data', (text: string) => this.read(text));
    // Node ends a stream without an 'error' too when the owner's session goes away (its process
    // killed: a FIN rather than an RST): every request still waiting may have run there.
    stream.on('end', () => this.fail(`${url} closed the channel without an answer`, this.connected));
    stream.on('error', (error) => this.fail(`${url}: ${error.message}`, this.connected));
    stream.on('close', () => this.fail(`${url} closed the channel without an answer`, this.connected));
  }

  get open(): boolean {
    return !this.ended && !this.stream.destroyed && !this.session.closed && !this.session.destroyed;
  }

  send(number: number, line: string, waiting: Waiting): void {
    this.waiting.set(number, waiting);
    this.stream.write(line);
  }

  /** A request that waited too long: its outcome is unknown (it may still run at the owner). */
  expire(number: number): void {
    const waiting = this.waiting.get(number);
    if (!waiting) return;
    this.waiting.delete(number);
    waiting.reject(new ForwardFailed(`${this.url} did not answer in time`, true));
  }

  private read(text: string): void {
    const lines = this.reader.push(text);
    if (!lines) {
      this.fail(`${this.url} sent an unreadable answer`, true);
      this.stream.close(http2.constants.NGHTTP2_PROTOCOL_ERROR);
      return;
    }
    for (const line of lines) {
      const [number = '', status = '', body = ''] = fields(line, 3) ?? [];
      const waiting = this.waiting.get(Number(number));
      if (!waiting) continue;
      this.waiting.delete(Number(number));
      clearTimeout(waiting.timer);
      if (status === '401') {
        waiting.reject(new ForwardFailed(`${this.url} refused the request's signature`, false));
        continue;
      }
      try {
        if (status !== '200') throw new Error(`status ${status}`);
        waiting.resolve(decodeWire<ForwardAnswer>(body));
      } catch {
        waiting.reject(new ForwardFailed(`${this.url} answered an unreadable line`, true));
      }
    }
  }

  /** The channel is over: every request still waiting fails, as `maybeSent` says. */
  fail(message: string, maybeSent: boolean): void {
    if (!this.ended) {
      this.ended = true;
      this.onEnd(this);
    }
    for (const [number, waiting] of this.waiting) {
      this.waiting.delete(number);
      clearTimeout(waiting.timer);
      waiting.reject(new ForwardFailed(message, maybeSent));
    }
    if (!this.stream.destroyed) this.stream.close(http2.constants.NGHTTP2_CANCEL);
    this.session.close();
  }
}

/** The sending side: one channel (and HTTP/2 session) per owner, opened on first use and again after it ended. */
export class ForwardClient {
  private readonly channels = new Map<string, Channel>();
  private next = 0;

  constructor(
    private readonly key: Buffer,
    private readonly timeoutMs = 10_000,
  ) {}

  private channel(url: string): Channel {
    const open = this.channels.get(url);
    if (open?.open) return open;
    // A session per channel: a channel ends only when its owner goes away or fails, and a session
    // that saw a GOAWAY could not carry a new one.
    const session = http2.connect(url);
    session.on('error', () => {});
    session.unref();
    const stream = session.request({ ':method': 'POST', ':path': FORWARD_PATH }, { endStream: false });
    const channel = new Channel(url, session, stream, (ended) => {
      if (this.channels.get(url) === ended) this.channels.delete(url);
    });
    this.channels.set(url, channel);
    return channel;
  }

  /** Sends one request to the node at `url`; ForwardFailed says whether it may have been run there. */
  send(url: string, forwarded: ForwardedRequest): Promise<ForwardAnswer> {
    const body = encodeWire(forwarded);
    const time = Date.now();
    return new Promise((resolve, reject) => {
      let channel: Channel;
      try {
        channel = this.channel(url);
      } catch (error) {
        reject(new ForwardFailed(`cannot reach ${url}: ${(error as Error).message}`, false));
        return;
      }
      this.next += 1;
      const number = this.next;
      const timer = setTimeout(() => channel.expire(number), this.timeoutMs);
      timer.unref();
      channel.send(number, `${number} ${time} ${signWire(this.key, time, body)} ${body}\n`, {
        resolve,
        reject,
        timer,
      });
    });
  }

  close(): void {
    for (const channel of this.channels.values()) {
      channel.fail('the node is closing', true);
      channel.session.destroy();
    }
    this.channels.clear();
  }
}
