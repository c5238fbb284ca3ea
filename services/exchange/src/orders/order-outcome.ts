import { ApiError } from '../errors.js';
import type { EntryOutcome } from '../orders/requests.js';
import type { OrderRow } from '../orders/store.js';

/**
 * The order an accepted outcome carries; a refusal becomes the service's documented error (the v2
 * clients know these by code, see errors.ts).
 */
export function acceptedOrder(outcome: EntryOutcome): OrderRow {
  if (outcome.ok) return outcome.order;
  const message = `${outcome.code}: ${outcome.message}`;
  switch (outcome.code) {
    case 'UNKNOWN_MARKET':
      throw new ApiError('unknown_market', outcome.message);
    case 'MISSING_FIELD':
    case 'NOT_A_DECIMAL':
    case 'INVALID_OPTION':
      throw new ApiError('validation_failed', outcome.message);
    case 'TOO_MANY_DECIMALS':
      throw new ApiError('too_many_decimals', outcome.message);
    case 'INSUFFICIENT_FUNDS':
      throw new ApiError('insufficient_funds', outcome.message);
    case 'NONCE_REUSED':
      throw new ApiError('nonce_reused', outcome.message);
    case 'KEY_DISABLED':
      throw new ApiError('key_disabled', outcome.message);
    case 'ORDER_NOT_FOUND':
      throw new ApiError('order_not_found', outcome.message);
    case 'ORDER_ALREADY_FILLED':
    case 'ORDER_ALREADY_CANCELLED':
      throw new ApiError('cancel_failed', message);
    case 'POST_ONLY_WOULD_TAKE':
      throw new ApiError('post_only_would_take', outcome.message);
    case 'AMEND_BELOW_FILLED':
      throw new ApiError('amend_below_filled', outcome.message);
    case 'AMEND_WOULD_TAKE':
      throw new ApiError('amend_would_take', outcome.message);
    case 'ORDER_NOT_AMENDABLE':
      throw new ApiError('order_not_amendable', outcome.message);
    default:
      throw new ApiError('invalid_order', message);
  }
}
