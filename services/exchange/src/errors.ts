import { type EdgeErrorName, type ErrorSpec, registrySpec } from '@platform/http-edge/edge-errors';

/**
 * The closed set of errors the exchange answers with. Every error body has one shape,
 * `{"error": {"code": <int>, "name": <string>, "message": <string>}}`: the v2 (Peatio) clients read
 * `error.code` and `error.message`, and the 2001..2009 codes are the ones they know.
 * The edge's errors come first (`@platform/http-edge/edge-errors`, codes 1000-1013), then this service's own.
 */
export type ErrorName =
  | EdgeErrorName
  | 'unknown_currency'
  | 'unknown_market'
  | 'too_many_decimals'
  | 'duplicate_header'
  | 'missing_credentials'
  | 'insufficient_funds'
  | 'invalid_order'
  | 'cancel_failed'
  | 'order_not_found'
  | 'bad_signature'
  | 'nonce_reused'
  | 'nonce_out_of_window'
  | 'unknown_key'
  | 'key_disabled'
  | 'scope_missing'
  // Order entry (issue 43): post-only and amend refusals, codes 2040-2049.
  | 'post_only_would_take'
  | 'amend_below_filled'
  | 'amend_would_take'
  | 'order_not_amendable'
  // A client_order_id the account used before (orders/client-order-ids.ts).
  | 'client_order_id_used'
  // Request limits (src/limits/).
  | 'rate_limited'
  // Transfer codes (src/codes), 3100-3199.
  | 'svc_code_invalid'
  | 'svc_code_not_found'
  | 'svc_code_currency_mismatch'
  | 'svc_code_already_redeemed'
  | 'svc_code_canceled'
  | 'svc_code_on_hold'
  | 'svc_code_unconfirmed'
  | 'svc_code_not_refundable_yet'
  | 'svc_code_wrong_recipient'
  | 'svc_code_unknown_recipient'
  | 'svc_code_too_many_failures'
  // Wallet: crypto deposits and withdrawals (src/wallet/, issue 14), codes 3000-3099.
  | 'address_exists'
  | 'invalid_address'
  | 'invalid_memo'
  | 'amount_below_minimum'
  | 'custody_unavailable'
  | 'fiat_unavailable'
  | 'not_a_coin'
  // Withdrawal address book (src/withdraw-addresses/, issue 43), codes 3050-3059.
  | 'address_not_allowlisted'
  | 'address_locked'
  | 'withdraw_address_exists'
  // E-mailed confirm/cancel links (src/mail/links.ts)
  | 'link_unknown'
  | 'link_used'
  | 'link_expired'
  // fiat deposits and withdrawals through the payment gateway (src/fiat/), codes 3200-3299
  | 'fiat_only'
  | 'gateway_unavailable'
  | 'gateway_refused'
  | 'unknown_service'
  | 'invalid_field'
  | 'amount_out_of_limits'
  | 'fund_source_not_found'
  | 'callback_refused'
  | 'unknown_reference'
  | 'callback_mismatch';

export type { ErrorSpec } from '@platform/http-edge/edge-errors';

/** Maps each error to its numeric code and HTTP status: the edge's, then this service's own. */
export const errorSpec = registrySpec<ErrorName>(ownErrorSpec);

/** This service's own errors; the switch is exhaustive. */
function ownErrorSpec(name: Exclude<ErrorName, EdgeErrorName>): ErrorSpec {
  switch (name) {
    case 'unknown_currency':
      return { code: 1006, status: 404 };
    case 'unknown_market':
      return { code: 1007, status: 404 };
    case 'too_many_decimals':
      return { code: 1008, status: 400 };
    case 'duplicate_header':
      return { code: 1009, status: 400 };
    case 'missing_credentials':
      return { code: 2001, status: 401 };
    case 'insufficient_funds':
      return { code: 2002, status: 400 };
    case 'invalid_order':
      return { code: 2002, status: 400 };
    case 'cancel_failed':
      return { code: 2003, status: 400 };
    case 'order_not_found':
      return { code: 2004, status: 404 };
    case 'bad_signature':
      return { code: 2005, status: 401 };
    case 'nonce_reused':
      return { code: 2006, status: 401 };
    case 'nonce_out_of_window':
      return { code: 2007, status: 401 };
    case 'unknown_key':
      return { code: 2008, status: 401 };
    case 'key_disabled':
      return { code: 2009, status: 401 };
    case 'scope_missing':
      return { code: 2010, status: 403 };
    case 'client_order_id_used':
      return { code: 2030, status: 409 };
    // Order entry (issue 43).
    case 'post_only_would_take':
      return { code: 2040, status: 400 };
    case 'amend_below_filled':
      return { code: 2041, status: 400 };
    case 'amend_would_take':
      return { code: 2042, status: 400 };
    case 'order_not_amendable':
      return { code: 2043, status: 400 };
    case 'rate_limited':
      return { code: 1012, status: 429 };
    // Transfer codes (src/codes).
    case 'svc_code_invalid':
      return { code: 3100, status: 400 };
    case 'svc_code_not_found':
      return { code: 3101, status: 404 };
    case 'svc_code_currency_mismatch':
      return { code: 3102, status: 400 };
    case 'svc_code_already_redeemed':
      return { code: 3103, status: 409 };
    case 'svc_code_canceled':
      return { code: 3104, status: 409 };
    case 'svc_code_on_hold':
      return { code: 3105, status: 409 };
    case 'svc_code_unconfirmed':
      return { code: 3106, status: 409 };
    case 'svc_code_not_refundable_yet':
      return { code: 3107, status: 409 };
    case 'svc_code_wrong_recipient':
      return { code: 3108, status: 403 };
    case 'svc_code_unknown_recipient':
      return { code: 3109, status: 400 };
    case 'svc_code_too_many_failures':
      return { code: 3110, status: 429 };
    // Wallet (issue 14).
    case 'address_exists':
      return { code: 3000, status: 400 };
    case 'invalid_address':
      return { code: 3001, status: 400 };
    case 'invalid_memo':
      return { code: 3002, status: 400 };
    case 'amount_below_minimum':
      return { code: 3003, status: 400 };
    case 'custody_unavailable':
      return { code: 3004, status: 503 };
    case 'fiat_unavailable':
      return { code: 3005, status: 503 };
    case 'not_a_coin':
      return { code: 3006, status: 400 };
    // Withdrawal address book (issue 43).
    case 'address_not_allowlisted':
      return { code: 3050, status: 403 };
    case 'address_locked':
      return { code: 3051, status: 403 };
    case 'withdraw_address_exists':
      return { code: 3052, status: 409 };
    // E-mailed confirm/cancel links
    case 'link_unknown':
      return { code: 3300, status: 404 };
    case 'link_used':
      return { code: 3301, status: 410 };
    case 'link_expired':
      return { code: 3302, status: 410 };
    // fiat (src/fiat/)
    case 'fiat_only':
      return { code: 3200, status: 400 };
    case 'gateway_unavailable':
      return { code: 3201, status: 502 };
    case 'gateway_refused':
      return { code: 3202, status: 400 };
    case 'unknown_service':
      return { code: 3203, status: 400 };
    case 'invalid_field':
      return { code: 3204, status: 400 };
    case 'amount_out_of_limits':
      return { code: 3205, status: 400 };
    case 'fund_source_not_found':
      return { code: 3206, status: 404 };
    case 'callback_refused':
      return { code: 3207, status: 401 };
    case 'unknown_reference':
      return { code: 3208, status: 404 };
    case 'callback_mismatch':
      return { code: 3209, status: 409 };
  }
}

/** Fields an error carries besides code, name and message (documented in the ErrorResponse schema). */
export interface ErrorDetails {
  /** `address_locked`: when the address becomes usable (ISO 8601). */
  readonly usable_at?: string;
}

/** An expected failure crossing the HTTP edge; the error handler renders it. */
export class ApiError extends Error {
  readonly errorName: ErrorName;
  readonly details: ErrorDetails | undefined;
  constructor(name: ErrorName, message: string, details?: ErrorDetails) {
    super(message);
    this.name = 'ApiError';
    this.errorName = name;
    this.details = details;
  }
}

export interface ErrorBody {
  error: { code: number; name: ErrorName; message: string } & ErrorDetails;
}

export function errorBody(name: ErrorName, message: string, details?: ErrorDetails): ErrorBody {
  return { error: { code: errorSpec(name).code, name, message, ...details } };
}
