import type { MatchingErrorCode } from '../matching/errors.js';
import type { StpMode, TimeInForce } from '../matching/types.js';
import type { OrderRow } from './store.js';

/**
 * What a client asks the order service; amounts in the market's engine units. `clientOrderId`: the
 * client's id of the order, reserved before (client-order-ids.ts), recorded by the order's batch.
 */
export type OrderRequest =
  | {
      readonly type: 'limit' | 'limit_stop_loss';
      readonly accountId: number;
      readonly side: 'buy' | 'sell';
      readonly price: bigint;
      readonly stopPrice?: bigint;
      readonly amount: bigint;
      readonly clientOrderId?: string;
      /** The API key placing it, when no nonce names it (the feed); recorded on the order. */
      readonly keyId?: number;
      /** Limit orders only: time in force (default gtc) and post-only. */
      readonly tif?: TimeInForce;
      readonly postOnly?: boolean;
      readonly stp?: StpMode;
    }
  | {
      readonly type: 'market';
      readonly accountId: number;
      readonly side: 'buy' | 'sell';
      readonly amount: bigint;
      readonly clientOrderId?: string;
      /** The API key placing it, when no nonce names it (the feed); recorded on the order. */
      readonly keyId?: number;
      readonly stp?: StpMode;
    }
  | {
      readonly type: 'market_by_quote';
      readonly accountId: number;
      readonly side: 'buy' | 'sell';
      readonly quote: bigint;
      readonly clientOrderId?: string;
      /** The API key placing it, when no nonce names it (the feed); recorded on the order. */
      readonly keyId?: number;
      readonly stp?: StpMode;
    }
  | { readonly type: 'cancel'; readonly accountId: number; readonly orderId: number }
  | {
      /** Amend a resting order: new total `amount` and/or `price` (engine units); `side` is the stored order's. */
      readonly type: 'amend';
      readonly accountId: number;
      readonly orderId: number;
      readonly side: 'buy' | 'sell';
      readonly amount?: bigint;
      readonly price?: bigint;
    };

/** A request that places an order. */
export type NewOrderRequest = Exclude<OrderRequest, { readonly type: 'cancel' | 'amend' }>;

export type OrderRefusal =
  | {
      readonly ok: false;
      readonly code: 'INSUFFICIENT_FUNDS' | 'NONCE_REUSED' | 'KEY_DISABLED';
      readonly message: string;
    }
  | { readonly ok: false; readonly code: MatchingErrorCode; readonly message: string };

/** Why an order as the HTTP edge received it could not become a request (see entry.ts). */
export interface InputRefusal {
  readonly ok: false;
  readonly code:
    | 'UNKNOWN_MARKET'
    | 'MISSING_FIELD'
    | 'NOT_A_DECIMAL'
    | 'TOO_MANY_DECIMALS'
    | 'INVALID_OPTION';
  readonly message: string;
}

/**
 * The outcome of one request, known only after its batch committed (the order as stored then).
 */
export type OrderOutcome = { readonly ok: true; readonly order: OrderRow } | OrderRefusal;

/** The outcome of an order as received: refused as input, or the outcome of its request. */
export type EntryOutcome = OrderOutcome | InputRefusal;
