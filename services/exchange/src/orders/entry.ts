import { ApiError } from '../errors.js';
import type { DeferredNonce } from '../http/request-context.js';
import { accepted, parseDecimal } from './format.js';
import type { OrderRequest } from './requests.js';
import type { OrderService } from './service.js';
import type { OrderRow } from './store.js';

/** An order as the HTTP edge received it (v2 form fields or the v3 submit body), still text. */
export interface OrderInput {
  readonly market: string;
  readonly side: 'buy' | 'sell';
  readonly type: 'limit' | 'market' | 'market_by_quote' | 'limit_stop_loss';
  /** Base amount (quote amount for market_by_quote), unsigned. */
  readonly amount: unknown;
  readonly price?: unknown;
  readonly stopPrice?: unknown;
}

/** Parses the input in the market's precision and places the order; refusals become ApiErrors. */
export async function placeOrder(
  orders: OrderService,
  accountId: number,
  input: OrderInput,
  nonce?: DeferredNonce,
): Promise<OrderRow> {
  const market = orders.market(input.market);
  if (!market) throw new ApiError('unknown_market', `unknown market "${input.market}"`);
  const { base_precision: amountPrecision, quote_precision: pricePrecision } = market.file;
  const need = (value: unknown, field: string): unknown => {
    if (value === undefined || value === null || value === '') {
      throw new ApiError('validation_failed', `${field} is required for a ${input.type} order`);
    }
    return value;
  };
  let request: OrderRequest;
  switch (input.type) {
    case 'limit':
      request = {
        type: 'limit',
        accountId,
        side: input.side,
        price: parseDecimal(need(input.price, 'price'), pricePrecision, 'price'),
        amount: parseDecimal(input.amount, amountPrecision, 'amount'),
      };
      break;
    case 'limit_stop_loss':
      request = {
        type: 'limit_stop_loss',
        accountId,
        side: input.side,
        price: parseDecimal(need(input.price, 'price'), pricePrecision, 'price'),
        stopPrice: parseDecimal(need(input.stopPrice, 'stop_price'), pricePrecision, 'stop_price'),
        amount: parseDecimal(input.amount, amountPrecision, 'amount'),
      };
      break;
    case 'market':
      request = {
        type: 'market',
        accountId,
        side: input.side,
        amount: parseDecimal(input.amount, amountPrecision, 'amount'),
      };
      break;
    case 'market_by_quote':
      request = {
        type: 'market_by_quote',
        accountId,
        side: input.side,
        quote: parseDecimal(input.amount, market.totalPrecision, 'amount'),
      };
      break;
  }
  return accepted(await orders.place(market.id, request, nonce));
}

/**
 * Cancels an order of the account; unknown, foreign, filled or cancelled orders are clear errors. A
 * deferred nonce is recorded (or refused as reused) in the cancel's batch.
 */
export async function cancelOrder(
  orders: OrderService,
  accountId: number,
  orderId: number,
  nonce?: DeferredNonce,
): Promise<OrderRow> {
  return accepted(await orders.cancel(accountId, orderId, nonce));
}
