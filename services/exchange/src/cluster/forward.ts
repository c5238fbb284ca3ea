import type { DeferredNonce } from '../http/request-context.js';
import type { OrderOutcome, OrderRequest } from '../orders/requests.js';
import { signWire, verifyWire, type WireKeys } from './wire.js';

/**
 * Order entry between the nodes of a cluster: a node that does not write a market sends the
 * request (already authenticated, its nonce still unrecorded) to the node that does, over HTTP/2
 * (h2c) at that node's NODE_URL, signed with a key derived from MASTER_KEY. The owner queues it at
 * its writer exactly as a local request, so the nonce is recorded in the owner's batch, and answers
 * the outcome, signed and bound to the request, which the first node's route formats as it would
 * its own. The owner's side is forward-server.ts, the sending side forward-client.ts.
 *
 * Each node keeps one long-lived HTTP/2 stream (a "channel") open to each owner and sends its
 * requests on it as lines, each answered by a line with the request's number, in any order (as a
 * gRPC bidirectional stream carries messages). A stream per request cost about 150 µs more CPU per
 * forward across both processes (Node's per-stream objects, headers and timers; measured with a
 * bare client and server on this machine: 198 µs against 44 µs per round trip, one at a time),
 * which on the two shared cores was the largest part of a forwarded order's extra latency.
 *
 * A channel opens with `POST FORWARD_PATH` carrying `x-cluster-auth: <time ms> <signature>` (the
 * channel key over the time): the owner answers 200, or 401 and closes the session. The sender
 * writes no request before that 200, so a refused or unanswered opening never ran anything.
 *
 * Lines, each ending in "\n" (JSON text never holds a raw newline):
 * - request: `<number> <time ms> <signature> <body>`, body = encodeWire(ForwardedRequest), signed
 *   with the time (signWire, the request key), so every request is authenticated on its own;
 * - answer: `<number> <status> <signature> <body>`: 200 with encodeWire(ForwardAnswer), or 401
 *   (body `{}`) when the request was not run because its signature did not verify; the signature
 *   (signAnswer, the answer key) covers the number, the request's signature, the status and the
 *   body. An answer whose signature does not verify is not the owner's: the sender takes the
 *   request's outcome as unknown (503 to the client), whatever the line says.
 */

/** v3: answers signed (v2 answered unsigned lines); nodes of different versions do not forward to each other. */
export const FORWARD_PATH = '/cluster/v3/orders';

/** The opening stream's header carrying the channel's signature. */
export const AUTH_HEADER = 'x-cluster-auth';

/** Longest line accepted (a request is a few hundred bytes). */
export const MAX_LINE = 65_536;

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

/** The `x-cluster-auth` value opening a channel now. */
export function channelAuth(keys: WireKeys, now: number): string {
  return `${now} ${signWire(keys.channel, now, FORWARD_PATH)}`;
}

/** Whether an `x-cluster-auth` value was signed with the cluster's channel key, recently. */
export function channelAuthValid(keys: WireKeys, value: unknown, now: number): boolean {
  if (typeof value !== 'string') return false;
  const [time = '', signature = ''] = value.split(' ');
  return /^[0-9]{1,15}$/.test(time) && verifyWire(keys.channel, Number(time), FORWARD_PATH, signature, now);
}

/** Splits a stream's text into lines; `undefined` once a line grew past MAX_LINE. */
export class LineReader {
  private rest = '';

  push(text: string): string[] | undefined {
    const lines = (this.rest + text).split('\n');
    this.rest = lines.pop() ?? '';
    if (this.rest.length > MAX_LINE || lines.some((line) => line.length > MAX_LINE)) return undefined;
    return lines;
  }
}

/** `count` fields separated by single spaces, the last one taking the rest of the line. */
export function fields(line: string, count: number): string[] | undefined {
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
