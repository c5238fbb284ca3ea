import { type ErrorName, errorSpec } from '../errors.js';

/**
 * Errors of the live feed, sent as `{"event":"error","code","name","message","id"?}` frames. Names
 * the REST API already has (unknown_market, the signature and nonce failures of `auth`) keep their
 * REST codes; the feed's own are 3300-3399.
 */
export type FeedErrorName =
  | 'malformed_frame'
  | 'unknown_op'
  | 'unknown_channel'
  | 'too_many_subscriptions'
  | 'not_authenticated'
  | 'already_authenticated'
  | 'too_many_messages'
  | 'too_many_operations'
  | 'unavailable';

export type AnyFeedErrorName = FeedErrorName | ErrorName;

const FEED_CODES: Record<FeedErrorName, number> = {
  malformed_frame: 3300,
  unknown_op: 3301,
  unknown_channel: 3302,
  too_many_subscriptions: 3303,
  not_authenticated: 3304,
  already_authenticated: 3305,
  too_many_messages: 3306,
  too_many_operations: 3307,
  unavailable: 1011,
};

export function feedErrorCode(name: AnyFeedErrorName): number {
  return name in FEED_CODES ? FEED_CODES[name as FeedErrorName] : errorSpec(name as ErrorName).code;
}

export interface FeedError {
  readonly name: AnyFeedErrorName;
  readonly message: string;
}

/** WebSocket close codes the feed uses (RFC 6455 section 7.4; 4000-4999 are the application's). */
export const CLOSE = {
  /** Too many messages (RFC 6455 1008 policy violation). */
  policy: 1008,
  /** The server is going away (shutdown). */
  goingAway: 1001,
  /** The send buffer of a connection that does not read outgrew FEED_MAX_BUFFERED_BYTES. */
  slowConsumer: 4008,
  /**
   * This node of a cluster followed a batch whose trades, orders and balances were not logged (it
   * stalled past its wish for them, orders/commits.ts `feedMissing`): the connections that follow
   * them are closed, to resubscribe and read what they missed from the REST API.
   */
  feedGap: 4009,
} as const;
