import {
  PrototypeKeyError,
  parseJsonKeepingNumberText,
  refusePrototypeKeys,
} from '@platform/decimal-text/json-numbers';
import { isResolution, RESOLUTIONS, type Resolution } from '../candles/resolutions.js';
import type { FeedError } from './errors.js';

/**
 * The client frames of the live feed (docs/feed.md) and their parsing (pure). Every client frame is
 * a JSON object with `op`; an optional integer `id` is echoed in the answer so a client can match it.
 * Order operations (`order.submit`...) carry a required `id` (an integer or a string) and `params`.
 */

/** Public channels of one market. */
export const MARKET_CHANNELS = ['trades', 'book', 'book_l3', 'ticker'] as const;
export const PUBLIC_CHANNELS = [...MARKET_CHANNELS, 'candles'] as const;
export const PRIVATE_CHANNELS = ['orders', 'balances', 'fills'] as const;
export type MarketChannel = (typeof MARKET_CHANNELS)[number];
export type PublicChannel = (typeof PUBLIC_CHANNELS)[number];
export type PrivateChannel = (typeof PRIVATE_CHANNELS)[number];
export type Channel = PublicChannel | PrivateChannel;
/** The public channels made of committed batches, whose frames carry `seq` and can be resumed. */
export const SEQUENCED_CHANNELS = ['trades', 'book', 'book_l3'] as const;
export type SequencedChannel = (typeof SEQUENCED_CHANNELS)[number];

export type Subscription =
  | { readonly channel: MarketChannel; readonly market: string }
  | { readonly channel: 'candles'; readonly market: string; readonly resolution: Resolution }
  | { readonly channel: PrivateChannel };

/** An order operation's client id, echoed in its answer. */
export type OperationId = number | string;

export type ClientFrame =
  | {
      readonly op: 'subscribe' | 'unsubscribe';
      readonly id?: number;
      readonly subscription: Subscription;
      /** `from_seq` (a sequenced public channel): resume after this sequence number. */
      readonly fromSeq?: number;
      /** `from_seqs` (a private channel): resume each listed market after its number. */
      readonly fromSeqs?: Readonly<Record<string, number>>;
    }
  | {
      readonly op: 'auth';
      readonly id?: number;
      readonly key: string;
      readonly nonce: string;
      readonly signature: string;
    }
  | { readonly op: 'ping'; readonly id?: number }
  | {
      readonly op: 'order';
      /** The operation's name, e.g. `order.submit` (looked up in the operation table). */
      readonly name: string;
      readonly id: OperationId;
      readonly params: Readonly<Record<string, unknown>>;
    };

export type Parsed =
  | { readonly ok: true; readonly frame: ClientFrame }
  | { readonly ok: false; readonly id?: OperationId; readonly error: FeedError; readonly operation?: true };

const fail = (name: FeedError['name'], message: string, id?: OperationId): Parsed =>
  id === undefined ? { ok: false, error: { name, message } } : { ok: false, id, error: { name, message } };

const isPublic = (value: unknown): value is PublicChannel =>
  (PUBLIC_CHANNELS as readonly unknown[]).includes(value);
const isPrivate = (value: unknown): value is PrivateChannel =>
  (PRIVATE_CHANNELS as readonly unknown[]).includes(value);
export const isSequenced = (value: unknown): value is SequencedChannel =>
  (SEQUENCED_CHANNELS as readonly unknown[]).includes(value);

function shortString(value: unknown, max: number): value is string {
  return typeof value === 'string' && value.length > 0 && value.length <= max;
}

const isSeq = (value: unknown): value is number =>
  typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;

/** Largest number of markets one `from_seqs` may list. */
const MAX_FROM_SEQS = 100;

/** The key under which a connection records one subscription, e.g. `book:btcuah`, `candles:btcuah:1m` or `orders`. */
export function subscriptionKey(subscription: Subscription): string {
  if (subscription.channel === 'candles') return `candles:${subscription.market}:${subscription.resolution}`;
  return 'market' in subscription ? `${subscription.channel}:${subscription.market}` : subscription.channel;
}

/** Parses one text frame; the market is checked later against the markets that exist. */
export function parseClientFrame(text: string): Parsed {
  let value: unknown;
  try {
    // Numbers count by their text, as in a REST body (an order's amount as a JSON number is exact).
    // `__proto__` keys refused as in a REST body: an operation's params are that body.
    value = parseJsonKeepingNumberText(text, refusePrototypeKeys);
  } catch (error) {
    if (error instanceof PrototypeKeyError)
      return fail('malformed_frame', `a frame must be JSON: ${error.message}`);
    return fail('malformed_frame', 'a frame must be a JSON object (with each key once)');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return fail('malformed_frame', 'a frame must be a JSON object');
  const frame = value as Record<string, unknown>;
  if (typeof frame.op === 'string' && frame.op.startsWith('order.')) return parseOperation(frame);
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
    case 'unsubscribe':
      return parseSubscription(frame, frame.op, id);
    default:
      return fail(
        'unknown_op',
        'op must be subscribe, unsubscribe, auth, ping or an order operation (order.submit, ...)',
        id,
      );
  }
}

function parseSubscription(
  frame: Record<string, unknown>,
  op: 'subscribe' | 'unsubscribe',
  id: number | undefined,
): Parsed {
  const withId = <T extends object>(body: T): T & { id?: number } =>
    id === undefined ? body : { ...body, id };
  const channel = frame.channel;
  const resume = op === 'subscribe' ? frame : {};
  if (isPrivate(channel)) {
    if (resume.from_seq !== undefined)
      return fail('malformed_frame', `channel ${channel} resumes with from_seqs, one number per market`, id);
    let fromSeqs: Record<string, number> | undefined;
    if (resume.from_seqs !== undefined) {
      const given = resume.from_seqs;
      if (typeof given !== 'object' || given === null || Array.isArray(given))
        return fail('malformed_frame', 'from_seqs must be an object: market -> sequence number', id);
      const entries = Object.entries(given);
      if (entries.length === 0 || entries.length > MAX_FROM_SEQS)
        return fail('malformed_frame', `from_seqs must list 1 to ${MAX_FROM_SEQS} markets`, id);
      // No prototype: `__PROTO__` (the frame's reader refuses only `__proto__`) lower-cased stays a key
      // (then an unknown market), where `{}` took it as the prototype and resumed over no market at all.
      fromSeqs = Object.create(null) as Record<string, number>;
      for (const [market, seq] of entries) {
        if (!shortString(market, 24) || !isSeq(seq))
          return fail('malformed_frame', 'from_seqs maps markets to non-negative integers', id);
        fromSeqs[market.toLowerCase()] = seq;
      }
    }
    return { ok: true, frame: withId({ op, subscription: { channel }, ...(fromSeqs ? { fromSeqs } : {}) }) };
  }
  if (!isPublic(channel)) {
    const known = [...PUBLIC_CHANNELS, ...PRIVATE_CHANNELS].join(', ');
    return fail('unknown_channel', `channel must be one of ${known}`, id);
  }
  if (!shortString(frame.market, 24)) return fail('malformed_frame', `channel ${channel} needs market`, id);
  const market = frame.market.toLowerCase();
  if (resume.from_seqs !== undefined)
    return fail(
      'malformed_frame',
      'from_seqs is for the private channels; a market channel takes from_seq',
      id,
    );
  let fromSeq: number | undefined;
  if (resume.from_seq !== undefined) {
    if (!isSequenced(channel))
      return fail('malformed_frame', `from_seq applies to ${SEQUENCED_CHANNELS.join(', ')}`, id);
    if (!isSeq(resume.from_seq))
      return fail('malformed_frame', 'from_seq must be a non-negative integer', id);
    fromSeq = resume.from_seq;
  }
  if (channel === 'candles') {
    if (!isResolution(frame.resolution))
      return fail(
        'malformed_frame',
        `channel candles needs resolution, one of ${Object.keys(RESOLUTIONS).join(', ')}`,
        id,
      );
    return {
      ok: true,
      frame: withId({ op, subscription: { channel, market, resolution: frame.resolution } }),
    };
  }
  return {
    ok: true,
    frame: withId({ op, subscription: { channel, market }, ...(fromSeq === undefined ? {} : { fromSeq }) }),
  };
}

/** `{"op":"order.<name>","id":<client id>,"params":{...}}`: the operation is looked up by its caller. */
function parseOperation(frame: Record<string, unknown>): Parsed {
  const id = frame.id;
  const validId =
    (typeof id === 'number' && Number.isSafeInteger(id)) || (typeof id === 'string' && shortString(id, 64));
  if (!validId)
    return {
      ok: false,
      operation: true,
      error: {
        name: 'malformed_frame',
        message: 'an order operation needs id: an integer or a string of 1 to 64 characters',
      },
    };
  const params = frame.params ?? {};
  if (typeof params !== 'object' || params === null || Array.isArray(params))
    return {
      ok: false,
      operation: true,
      id,
      error: { name: 'malformed_frame', message: 'params must be an object' },
    };
  return {
    ok: true,
    frame: { op: 'order', name: frame.op as string, id, params: params as Record<string, unknown> },
  };
}
