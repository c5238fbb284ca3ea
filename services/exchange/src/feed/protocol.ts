import type { FeedError } from './errors.js';

/**
 * The client frames of the live feed (docs/feed.md) and their parsing (pure). Every client frame is
 * a JSON object with `op`; an optional integer `id` is echoed in the answer so a client can match it.
 */

export const PUBLIC_CHANNELS = ['trades', 'book', 'ticker'] as const;
export const PRIVATE_CHANNELS = ['orders', 'balances'] as const;
export type PublicChannel = (typeof PUBLIC_CHANNELS)[number];
export type PrivateChannel = (typeof PRIVATE_CHANNELS)[number];
export type Channel = PublicChannel | PrivateChannel;

export type Subscription =
  | { readonly channel: PublicChannel; readonly market: string }
  | { readonly channel: PrivateChannel };

export type ClientFrame =
  | { readonly op: 'subscribe' | 'unsubscribe'; readonly id?: number; readonly subscription: Subscription }
  | {
      readonly op: 'auth';
      readonly id?: number;
      readonly key: string;
      readonly nonce: string;
      readonly signature: string;
    }
  | { readonly op: 'ping'; readonly id?: number };

export type Parsed =
  | { readonly ok: true; readonly frame: ClientFrame }
  | { readonly ok: false; readonly id?: number; readonly error: FeedError };

const fail = (name: FeedError['name'], message: string, id?: number): Parsed =>
  id === undefined ? { ok: false, error: { name, message } } : { ok: false, id, error: { name, message } };

const isPublic = (value: unknown): value is PublicChannel =>
  (PUBLIC_CHANNELS as readonly unknown[]).includes(value);
const isPrivate = (value: unknown): value is PrivateChannel =>
  (PRIVATE_CHANNELS as readonly unknown[]).includes(value);

function shortString(value: unknown, max: number): value is string {
  return typeof value === 'string' && value.length > 0 && value.length <= max;
}

/** The key under which a connection records one subscription, e.g. `book:btcuah` or `orders`. */
export function subscriptionKey(subscription: Subscription): string {
  return 'market' in subscription ? `${subscription.channel}:${subscription.market}` : subscription.channel;
}

/** Parses one text frame; the market is checked later against the markets that exist. */
export function parseClientFrame(text: string): Parsed {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return fail('malformed_frame', 'a frame must be a JSON object');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return fail('malformed_frame', 'a frame must be a JSON object');
  const frame = value as Record<string, unknown>;
  let id: number | undefined;
  if (frame.id !== undefined) {
    if (!Number.isSafeInteger(frame.id)) return fail('malformed_frame', 'id must be an integer');
    id = frame.id as number;
  }
  const withId = <T extends object>(body: T): T & { id?: number } =>
    id === undefined ? body : { ...body, id };
  switch (frame.op) {
    case 'ping':
      return { ok: true, frame: withId({ op: 'ping' as const }) };
    case 'auth': {
      if (!shortString(frame.key, 128)) return fail('missing_credentials', 'auth needs key', id);
      if (!shortString(frame.nonce, 32)) return fail('missing_credentials', 'auth needs nonce', id);
      if (!shortString(frame.signature, 256)) return fail('missing_credentials', 'auth needs signature', id);
      return {
        ok: true,
        frame: withId({
          op: 'auth' as const,
          key: frame.key,
          nonce: frame.nonce,
          signature: frame.signature,
        }),
      };
    }
    case 'subscribe':
    case 'unsubscribe': {
      const op = frame.op;
      const channel = frame.channel;
      if (isPrivate(channel)) return { ok: true, frame: withId({ op, subscription: { channel } }) };
      if (!isPublic(channel)) {
        const known = [...PUBLIC_CHANNELS, ...PRIVATE_CHANNELS].join(', ');
        return fail('unknown_channel', `channel must be one of ${known}`, id);
      }
      if (!shortString(frame.market, 24))
        return fail('malformed_frame', `channel ${channel} needs market`, id);
      return {
        ok: true,
        frame: withId({ op, subscription: { channel, market: frame.market.toLowerCase() } }),
      };
    }
    default:
      return fail('unknown_op', 'op must be subscribe, unsubscribe, auth or ping', id);
  }
}
