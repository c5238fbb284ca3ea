import { createHmac, timingSafeEqual } from 'node:crypto';

// The internal channel's messages (forward.ts): JSON with bigints tagged, signed with a key derived
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

/** Largest accepted age of a signed internal message (the nodes' clocks only need to roughly agree). */
const SIGNATURE_WINDOW_MS = 60_000;

export function signWire(key: Buffer, time: number, body: string): string {
  return createHmac('sha256', key).update(`${time}\n${body}`).digest('hex');
}

/** Whether the message was signed with the cluster's key, recently. */
export function verifyWire(key: Buffer, time: number, body: string, signature: string, now: number): boolean {
  if (!Number.isSafeInteger(time) || Math.abs(now - time) > SIGNATURE_WINDOW_MS) return false;
  const expected = Buffer.from(signWire(key, time, body), 'hex');
  const given = Buffer.from(/^[0-9a-f]{64}$/.test(signature) ? signature : '', 'hex');
  return given.length === expected.length && timingSafeEqual(given, expected);
}
