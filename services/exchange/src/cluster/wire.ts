import { createHmac, timingSafeEqual } from 'node:crypto';

// The internal channel's messages (forward.ts): JSON with bigints tagged, signed with keys derived
// from MASTER_KEY, which every node of a cluster shares.

/** JSON text of a value holding bigints (as {"$bigint": "123"}). */
export function encodeWire(value: unknown): string {
  return JSON.stringify(value, (_key, v) => (typeof v === 'bigint' ? { $bigint: v.toString() } : v));
}

/** The value of `encodeWire`'s text. */
export function decodeWire<T>(text: string): T {
  return JSON.parse(text, (_key, v) => {
    if (v && typeof v === 'object' && !Array.isArray(v)) {
      const keys = Object.keys(v);
      if (keys.length === 1 && keys[0] === '$bigint' && typeof v.$bigint === 'string')
        return BigInt(v.$bigint);
    }
    return v;
  }) as T;
}

/**
 * One key per kind of message, derived from the channel's key: a signature of one kind (a request,
 * an answer, a channel's opening) never verifies as another, whatever its text.
 */
export interface WireKeys {
  /** Signs each forwarded request (its time and body). */
  readonly request: Buffer;
  /** Signs each answer, bound to the request it answers. */
  readonly answer: Buffer;
  /** Signs the opening of a channel (the stream's `x-cluster-auth` header). */
  readonly channel: Buffer;
}

export function wireKeys(key: Buffer): WireKeys {
  const derive = (purpose: string) => createHmac('sha256', key).update(`cluster-wire:${purpose}`).digest();
  return { request: derive('request'), answer: derive('answer'), channel: derive('channel') };
}

/** Largest accepted age of a signed internal message (the nodes' clocks only need to roughly agree). */
const SIGNATURE_WINDOW_MS = 60_000;

export function signWire(key: Buffer, time: number, body: string): string {
  return createHmac('sha256', key).update(`${time}\n${body}`).digest('hex');
}

function sameSignature(expected: string, given: string): boolean {
  const a = Buffer.from(expected, 'hex');
  const b = Buffer.from(/^[0-9a-f]{64}$/.test(given) ? given : '', 'hex');
  return a.length === b.length && timingSafeEqual(a, b);
}

/** Whether the message was signed with `key`, recently. */
export function verifyWire(key: Buffer, time: number, body: string, signature: string, now: number): boolean {
  if (!Number.isSafeInteger(time) || Math.abs(now - time) > SIGNATURE_WINDOW_MS) return false;
  return sameSignature(signWire(key, time, body), signature);
}

/**
 * The signature of an answer: over its status and body and over the request it answers (the
 * request's number on its channel and the request's own signature, which covers the request's time
 * and body), so an answer taken from one request does not verify on another, on any channel.
 */
export function signAnswer(
  key: Buffer,
  number: string,
  requestSignature: string,
  status: string,
  body: string,
): string {
  return createHmac('sha256', key).update(`${number}\n${requestSignature}\n${status}\n${body}`).digest('hex');
}

export function verifyAnswer(
  key: Buffer,
  number: string,
  requestSignature: string,
  status: string,
  body: string,
  signature: string,
): boolean {
  return sameSignature(signAnswer(key, number, requestSignature, status, body), signature);
}
