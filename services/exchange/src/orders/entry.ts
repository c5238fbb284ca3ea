import type { DeferredNonce } from '../http/request-context.js';
import { STP_MODES, type StpMode, type TimeInForce } from '../matching/types.js';
import { parseDecimal } from './decimal-input.js';
import type { EntryOutcome, InputRefusal, NewOrderRequest, OrderOutcome } from './requests.js';
import type { OrderService } from './service.js';

/** An order as the HTTP edge received it (v2 form fields or the v3 submit body), still text. */
export interface OrderInput {
  readonly market: string;
  readonly side: 'buy' | 'sell';
  readonly type: 'limit' | 'market' | 'market_by_quote' | 'limit_stop_loss';
  /** Base amount (quote amount for market_by_quote), unsigned. */
  readonly amount: unknown;
  readonly price?: unknown;
  readonly stopPrice?: unknown;
  /** Order options as received (see `orderOptions`): time in force, post-only, self-trade prevention. */
  readonly timeInForce?: unknown;
  readonly postOnly?: unknown;
  readonly stp?: unknown;
}

/**
 * Time in force, post-only and the self-trade prevention mode of an input, under our names
 * (`gtc`/`ioc`/`fok`, `post_only`, `stp`) or ccxt's (`GTC`/`IOC`/`FOK`/`PO` where `PO` is post-only;
 * `postOnly`), case-insensitive. Time in force and post-only are for limit orders only.
 */
export function orderOptions(
  input: OrderInput,
): { tif?: TimeInForce; postOnly?: boolean; stp?: StpMode } | InputRefusal {
  const bad = (message: string): InputRefusal => ({ ok: false, code: 'INVALID_OPTION', message });
  const out: { tif?: TimeInForce; postOnly?: boolean; stp?: StpMode } = {};
  if (input.timeInForce !== undefined && input.timeInForce !== null) {
    const tif = String(input.timeInForce).toLowerCase();
    if (tif === 'po') out.postOnly = true;
    else if (tif === 'gtc' || tif === 'ioc' || tif === 'fok') out.tif = tif;
    else return bad('time_in_force must be gtc, ioc or fok (ccxt: GTC, IOC, FOK, PO)');
  }
  if (input.postOnly !== undefined && input.postOnly !== null) {
    const post = input.postOnly;
    if (post === true || post === 'true' || post === '1') out.postOnly = true;
    else if (post === false || post === 'false' || post === '0') {
      if (out.postOnly === true) return bad('post_only false contradicts time in force PO');
    } else return bad('post_only must be true or false');
  }
  if (out.postOnly === true && out.tif !== undefined && out.tif !== 'gtc') {
    return bad('a post-only order rests: its time in force is gtc');
  }
  if ((out.tif !== undefined || out.postOnly !== undefined) && input.type !== 'limit') {
    return bad('time_in_force and post_only are for limit orders');
  }
  if (input.stp !== undefined && input.stp !== null) {
    const stp = String(input.stp).toLowerCase();
    if (!(STP_MODES as readonly string[]).includes(stp))
      return bad(`stp must be one of ${STP_MODES.join(', ')}`);
    out.stp = stp as StpMode;
  }
  return out;
}

/** Who calls an order route: the account of the verified key, and the nonce its batch records (REST). */
export interface OrderCaller {
  readonly accountId: number;
  /**
   * The API key the order comes with: its `stp` default applies when the order names none; recorded
   * on the order (src/cancel-all/), from the nonce when there is one, else from this (the socket).
   */
  readonly keyId?: number | undefined;
  readonly nonce?: DeferredNonce | undefined;
}

/** The request field naming the caller's key, when the caller has one but no nonce. */
export function keyOf(caller: OrderCaller): { readonly keyId?: number } {
  return caller.keyId !== undefined && caller.nonce === undefined ? { keyId: caller.keyId } : {};
}

type Parsed = { readonly ok: true; readonly value: bigint } | InputRefusal;

/** The request an input asks for, in the market's precision, or why it cannot be one (first bad field). */
export function orderRequest(
  orders: OrderService,
  accountId: number,
  input: OrderInput,
): { readonly ok: true; readonly market: string; readonly request: NewOrderRequest } | InputRefusal {
  const market = orders.market(input.market);
  if (!market) return { ok: false, code: 'UNKNOWN_MARKET', message: `unknown market "${input.market}"` };
  const { base_precision: amountPrecision, quote_precision: pricePrecision } = market.file;
  const required = (value: unknown, precision: number, field: string): Parsed =>
    value === undefined || value === null || value === ''
      ? { ok: false, code: 'MISSING_FIELD', message: `${field} is required for a ${input.type} order` }
      : parseDecimal(value, precision, field);
  const ok = { ok: true, market: market.id } as const;
  const { side } = input;
  const options = orderOptions(input);
  if ('ok' in options) return options;
  const stp = options.stp === undefined ? {} : { stp: options.stp };
  switch (input.type) {
    case 'limit': {
      const price = required(input.price, pricePrecision, 'price');
      if (!price.ok) return price;
      const amount = parseDecimal(input.amount, amountPrecision, 'amount');
      if (!amount.ok) return amount;
      return {
        ...ok,
        request: { type: 'limit', accountId, side, price: price.value, amount: amount.value, ...options },
      };
    }
    case 'limit_stop_loss': {
      const price = required(input.price, pricePrecision, 'price');
      if (!price.ok) return price;
      const stopPrice = required(input.stopPrice, pricePrecision, 'stop_price');
      if (!stopPrice.ok) return stopPrice;
      const amount = parseDecimal(input.amount, amountPrecision, 'amount');
      if (!amount.ok) return amount;
      return {
        ...ok,
        request: {
          type: 'limit_stop_loss',
          accountId,
          side,
          price: price.value,
          stopPrice: stopPrice.value,
          amount: amount.value,
          ...stp,
        },
      };
    }
    case 'market': {
      const amount = parseDecimal(input.amount, amountPrecision, 'amount');
      if (!amount.ok) return amount;
      return { ...ok, request: { type: 'market', accountId, side, amount: amount.value, ...stp } };
    }
    case 'market_by_quote': {
      const quote = parseDecimal(input.amount, market.totalPrecision, 'amount');
      if (!quote.ok) return quote;
      return { ...ok, request: { type: 'market_by_quote', accountId, side, quote: quote.value, ...stp } };
    }
  }
}

/** Parses the input in the market's precision and places the order; refusals are values. */
export async function placeOrder(
  orders: OrderService,
  accountId: number,
  input: OrderInput,
  nonce?: DeferredNonce,
  keyId?: number,
): Promise<EntryOutcome> {
  const parsed = orderRequest(orders, accountId, input);
  if (!parsed.ok) return parsed;
  const request = keyId === undefined ? parsed.request : { ...parsed.request, keyId };
  return orders.place(parsed.market, request, nonce);
}

/**
 * Cancels an order of the account; unknown, foreign, filled or cancelled orders are refusals. A
 * deferred nonce is recorded (or refused as reused) in the cancel's batch.
 */
export function cancelOrder(
  orders: OrderService,
  accountId: number,
  orderId: number,
  nonce?: DeferredNonce,
): Promise<OrderOutcome> {
  return orders.cancel(accountId, orderId, nonce);
}
