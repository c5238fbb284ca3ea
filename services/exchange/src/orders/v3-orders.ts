import { decimalText, parseId } from '@platform/decimal-text/decimal-text';
import { parseJsonKeepingNumberText, refusePrototypeKeys } from '@platform/decimal-text/json-numbers';
import { type Static, Type } from 'typebox';
import { apiKeyStp } from '../apikeys/store.js';
import { recordDeferredNonce, v3Auth } from '../auth/authenticate.js';
import { cancelAllOrders } from '../cancel-all/routes.js';
import { ApiError } from '../errors.js';
import type { RouteDeps } from '../http/deps.js';
import { announcePage, NEXT_BEFORE_ID, pageOf } from '../http/paging.js';
import { errorResponses, PageHeaders, V3AuthHeaders, v3Security } from '../http/schemas.js';
import type { App } from '../http/typed.js';
import { cancelOrder, keyOf, type OrderCaller, placeOrder } from '../orders/entry.js';
import { cancelledOrder, type V3Order, v3Order, v3Trade } from '../orders/format.js';
import type { TradingMarket } from '../orders/markets.js';
import { listOrders, orderById, tradesOfOrder } from '../orders/store.js';
import { ClientOrderIdSchema, placeWithClientId } from './client-order-ids.js';
import { parseDecimal } from './decimal-input.js';
import { acceptedOrder } from './order-outcome.js';

const TWO_WEEKS_MS = 14 * 86_400_000;
/** Default and largest page of the active-orders list (the list's fixed size before it had pages). */
export const ACTIVE_ORDERS_MAX = 1000;

const V3OrderSchema = Type.Array(Type.Union([Type.String(), Type.Number(), Type.Null()]), {
  description:
    '[id, null, null, market, created ms, updated ms, volume, original volume (< 0 sell), LIMIT|MARKET, null x4, status, null, null, price, average price]',
});
const V3TradeSchema = Type.Array(Type.Union([Type.String(), Type.Number(), Type.Null()]), {
  description:
    '[trade id, market, time ms, order id, amount, rate, null, null, 1 maker | -1 taker, fee, fee currency]',
});
export const CancelledSchema = Type.Object({
  id: Type.Integer(),
  side: Type.String(),
  type: Type.String(),
  price: Type.String(),
  avg_execution_price: Type.String(),
  symbol: Type.String(),
  timestamp: Type.Integer(),
  original_amount: Type.String(),
  remaining_amount: Type.String(),
  executed_amount: Type.String(),
  is_cancelled: Type.Null(),
  is_hidden: Type.Null(),
  is_live: Type.Null(),
  was_forced: Type.Null(),
  exchange: Type.Null(),
});

// The integer form has the bound of the string form: a larger id (1e19) is a 400, not a database error.
const IdInput = Type.Union([
  Type.Integer({ minimum: 1, maximum: 999_999_999_999_999 }),
  Type.String({ pattern: '^[0-9]{1,15}$' }),
]);

/** A time in ms from the epoch up to the end of year 9999; 1e19 is a 400 rather than a database error. */
const TIME_MS = { minimum: 0, maximum: 253_402_300_799_999 } as const;

/** An order id in its documented form (@platform/decimal-text parseId): `"0x9"` or `9.0e0` is no id. */
function orderIdOf(value: unknown): number {
  const id = parseId(value, 999_999_999_999_999);
  if (id === undefined) throw new ApiError('validation_failed', 'order_id must be a positive integer');
  return id;
}

/** `order_ids` arrives as an array or as a JSON string such as "[1,2]". */
function orderIdsOf(value: unknown): number[] {
  let list = value;
  if (typeof value === 'string') {
    try {
      // Its numbers count by their text, as in a body: "[1e0]" names no order.
      list = parseJsonKeepingNumberText(value, refusePrototypeKeys);
    } catch {
      throw new ApiError('validation_failed', 'order_ids must be an array of order ids or its JSON text');
    }
  }
  if (!Array.isArray(list) || list.length === 0 || list.length > 100) {
    throw new ApiError('validation_failed', 'order_ids must list 1 to 100 order ids');
  }
  return list.map((id) => {
    if (typeof id !== 'number' && typeof id !== 'string')
      throw new ApiError('validation_failed', 'order_ids must be integers');
    return orderIdOf(id);
  });
}

/** The body of `POST /v3/auth/w/order/submit` (and of the feed's `order.submit`). */
export const V3SubmitBody = Type.Object({
  symbol: Type.String(),
  type: Type.Union(['limit', 'market', 'market_by_quote', 'limit_stop_loss'].map((t) => Type.Literal(t))),
  amount: Type.Union([Type.Number(), Type.String()]),
  price: Type.Optional(Type.Union([Type.Number(), Type.String()])),
  stop_price: Type.Optional(Type.Union([Type.Number(), Type.String()])),
  client_order_id: Type.Optional(ClientOrderIdSchema),
  time_in_force: Type.Optional(
    Type.String({
      description: "limit orders: gtc (default), ioc or fok; ccxt's GTC, IOC, FOK, PO accepted",
    }),
  ),
  timeInForce: Type.Optional(Type.String({ description: "ccxt's name of time_in_force" })),
  post_only: Type.Optional(
    Type.Union([Type.Boolean(), Type.String()], {
      description: 'limit orders: refused with post_only_would_take when it would trade at once',
    }),
  ),
  postOnly: Type.Optional(
    Type.Union([Type.Boolean(), Type.String()], { description: "ccxt's name of post_only" }),
  ),
  stp: Type.Optional(
    Type.String({
      description:
        'self-trade prevention when this order takes: expire_maker (default), expire_taker, expire_both, decrement, none',
    }),
  ),
});

/** The body of `POST /v3/order/amend` (and of the feed's `order.amend`). */
export const V3AmendBody = Type.Object({
  order_id: IdInput,
  amount: Type.Optional(
    Type.Union([Type.Number(), Type.String()], {
      description: 'new total amount (filled + remaining), with the sign of submit (< 0 for a sell)',
    }),
  ),
  price: Type.Optional(Type.Union([Type.Number(), Type.String()], { description: 'new limit price' })),
});

/** The body of `POST /v3/order/cancel` (and of the feed's `order.cancel`). */
export const V3CancelBody = Type.Object({ order_id: IdInput });

function marketOf(deps: RouteDeps, id: string): TradingMarket {
  const found = deps.orders.market(id);
  if (!found) throw new ApiError('unknown_market', `unknown market "${id}"`);
  return found;
}

/**
 * An option given under our name or ccxt's: both, saying different things, is refused (taking one
 * silently could place an IOC where the client meant FOK).
 */
function eitherName<T extends string | boolean>(
  name: string,
  value: T | undefined,
  alias: string,
  aliased: T | undefined,
): T | undefined {
  if (
    value !== undefined &&
    aliased !== undefined &&
    String(value).toLowerCase() !== String(aliased).toLowerCase()
  )
    throw new ApiError('validation_failed', `${name} and ${alias} say different things: give one of them`);
  return value ?? aliased;
}

/** The handler of `POST /v3/auth/w/order/submit`: the order as stored once its batch committed. */
export async function submitV3Order(
  deps: RouteDeps,
  caller: OrderCaller,
  body: Static<typeof V3SubmitBody>,
): Promise<V3Order> {
  const text = decimalText(body.amount);
  if (text === undefined)
    throw new ApiError('validation_failed', 'amount must be a JSON number or a plain decimal string');
  const sell = text.startsWith('-');
  const input = {
    market: body.symbol,
    side: sell ? ('sell' as const) : ('buy' as const),
    type: body.type as 'limit' | 'market' | 'market_by_quote' | 'limit_stop_loss',
    amount: sell ? text.slice(1) : text,
    price: body.price,
    stopPrice: body.stop_price,
    timeInForce: eitherName('time_in_force', body.time_in_force, 'timeInForce', body.timeInForce),
    postOnly: eitherName('post_only', body.post_only, 'postOnly', body.postOnly),
    // The key's default (key update --stp), read with each order so a change applies at once.
    stp: body.stp ?? (caller.keyId === undefined ? undefined : await apiKeyStp(deps.db, caller.keyId)),
  };
  const outcome =
    body.client_order_id === undefined
      ? await placeOrder(deps.orders, caller.accountId, input, caller.nonce, keyOf(caller).keyId)
      : await placeWithClientId(deps, caller, input, body.client_order_id);
  const order = acceptedOrder(outcome);
  return v3Order(marketOf(deps, order.market), order);
}

/**
 * The handler of `POST /v3/order/amend`: the order as `/v3/auth/r/orders` lists it once its batch
 * committed. The amount's sign must be the order's side (as on submit).
 */
export async function amendV3Order(
  deps: RouteDeps,
  caller: OrderCaller,
  body: Static<typeof V3AmendBody>,
): Promise<V3Order> {
  const orderId = orderIdOf(body.order_id);
  if (body.amount === undefined && body.price === undefined) {
    throw new ApiError('validation_failed', 'an amend changes amount, price or both');
  }
  const stored = await orderById(deps.db, orderId);
  if (!stored || stored.accountId !== caller.accountId) {
    throw new ApiError('order_not_found', `order ${orderId} not found`);
  }
  const m = marketOf(deps, stored.market);
  const change: { amount?: bigint; price?: bigint } = {};
  if (body.amount !== undefined) {
    const text = decimalText(body.amount);
    if (text === undefined)
      throw new ApiError('validation_failed', 'amount must be a JSON number or a plain decimal string');
    const sell = text.startsWith('-');
    if (sell !== (stored.side === 'sell')) {
      throw new ApiError(
        'validation_failed',
        `amount must have the sign of the ${stored.side} order (< 0 sells)`,
      );
    }
    change.amount = parsedOrThrow(parseDecimal(sell ? text.slice(1) : text, m.file.base_precision, 'amount'));
  }
  if (body.price !== undefined) {
    change.price = parsedOrThrow(parseDecimal(body.price, m.file.quote_precision, 'price'));
  }
  const order = acceptedOrder(await deps.orders.amend(caller.accountId, orderId, change, caller.nonce));
  return v3Order(marketOf(deps, order.market), order);
}

function parsedOrThrow(parsed: ReturnType<typeof parseDecimal>): bigint {
  if (parsed.ok) return parsed.value;
  acceptedOrder(parsed);
  throw new Error('unreachable: acceptedOrder throws for a refusal');
}

/** The handler of `POST /v3/order/cancel`. */
export async function cancelV3Order(
  deps: RouteDeps,
  caller: OrderCaller,
  body: Static<typeof V3CancelBody>,
): Promise<ReturnType<typeof cancelledOrder>> {
  const order = acceptedOrder(
    await cancelOrder(deps.orders, caller.accountId, orderIdOf(body.order_id), caller.nonce),
  );
  return cancelledOrder(marketOf(deps, order.market), order);
}

/** v3 private order methods: submit, active and executed lists, trades of an order, cancels. */
export function v3OrderRoutes(app: App, deps: RouteDeps): void {
  const market = (id: string): TradingMarket => marketOf(deps, id);
  const signed = (scope: 'read' | 'trade', summary: string) => ({
    preValidation: v3Auth(deps.auth, scope),
    tags: ['v3 private'],
    summary,
  });

  app.post(
    '/v3/auth/w/order/submit',
    {
      // The nonce is recorded in the order's own transaction (group commit), see authenticate.ts.
      preValidation: v3Auth(deps.auth, 'trade', { deferNonce: true }),
      onSend: recordDeferredNonce(deps.auth),
      schema: {
        tags: ['v3 private'],
        summary: 'Create an order; amount < 0 sells (for market_by_quote it is the quote amount)',
        security: v3Security,
        headers: V3AuthHeaders,
        body: V3SubmitBody,
        response: { 200: V3OrderSchema, ...errorResponses },
      },
    },
    (request) =>
      submitV3Order(
        deps,
        { accountId: request.auth!.accountId, keyId: request.auth!.keyId, nonce: request.deferredNonce },
        request.body,
      ),
  );

  for (const url of ['/v3/auth/r/orders', '/v3/auth/r/orders/:market']) {
    const { preValidation, ...doc } = signed('read', 'Active orders');
    app.post(
      url,
      {
        preValidation,
        schema: {
          ...doc,
          security: v3Security,
          headers: V3AuthHeaders,
          params: Type.Object({ market: Type.Optional(Type.String({ maxLength: 24 })) }),
          // Both optional: `{}` (the spec's body) answers the newest ACTIVE_ORDERS_MAX as before.
          body: Type.Object({
            limit: Type.Optional(
              Type.Integer({
                minimum: 1,
                description: `orders per page, newest first; default and at most ${ACTIVE_ORDERS_MAX} (larger values are lowered)`,
              }),
            ),
            before_id: Type.Optional(
              Type.Integer({
                minimum: 1,
                maximum: 999_999_999_999_999,
                description: 'only orders with a smaller id: the x-next-before-id header of the page before',
              }),
            ),
          }),
          response: {
            200: {
              ...Type.Array(V3OrderSchema),
              headers: PageHeaders(NEXT_BEFORE_ID, 'the before_id of the next page, when x-has-more'),
            },
            ...errorResponses,
          },
        },
      },
      async (request, reply) => {
        const m = request.params.market === undefined ? undefined : market(request.params.market);
        const limit = Math.min(request.body.limit ?? ACTIVE_ORDERS_MAX, ACTIVE_ORDERS_MAX);
        const rows = await listOrders(deps.db, {
          accountId: request.auth!.accountId,
          ...(m ? { market: m.id } : {}),
          ...(request.body.before_id ? { beforeId: request.body.before_id } : {}),
          states: ['wait'],
          limit: limit + 1,
          ascending: false,
          by: 'id',
        });
        const page = pageOf(rows, limit);
        announcePage(reply, page.more, [NEXT_BEFORE_ID, page.items[page.items.length - 1]?.id ?? 0]);
        return page.items.map((row) => v3Order(market(row.market), row));
      },
    );
  }

  for (const url of ['/v3/auth/r/orders/hist', '/v3/auth/r/orders/:market/hist']) {
    const { preValidation, ...doc } = signed('read', 'Executed (finished) orders');
    app.post(
      url,
      {
        preValidation,
        schema: {
          ...doc,
          security: v3Security,
          headers: V3AuthHeaders,
          params: Type.Object({ market: Type.Optional(Type.String({ maxLength: 24 })) }),
          body: Type.Object({
            start: Type.Optional(
              Type.Integer({ ...TIME_MS, description: 'ms; default two weeks before now' }),
            ),
            end: Type.Optional(Type.Integer({ ...TIME_MS, description: 'ms; default now' })),
            limit: Type.Optional(Type.Integer({ minimum: 1, description: 'default 25, at most 1000' })),
            sort: Type.Optional(
              Type.Union([Type.Literal(1), Type.Literal(-1)], { description: 'default -1 (newest first)' }),
            ),
          }),
          response: { 200: Type.Array(V3OrderSchema), ...errorResponses },
        },
      },
      async (request) => {
        const m = request.params.market === undefined ? undefined : market(request.params.market);
        const now = deps.now();
        const body = request.body;
        const rows = await listOrders(deps.db, {
          accountId: request.auth!.accountId,
          ...(m ? { market: m.id } : {}),
          // The spec's executed list: what executed, wholly (EXECUTED) or in part and then cancelled
          // (CANCELED, its volume the part that did not execute); an order cancelled untraded is not listed.
          states: ['done', 'cancel'],
          executedOnly: true,
          from: body.start ?? now - TWO_WEEKS_MS,
          to: body.end ?? now,
          limit: Math.min(body.limit ?? 25, 1000),
          ascending: body.sort === 1,
          by: 'updated_at',
        });
        return rows.map((row) => v3Order(market(row.market), row));
      },
    );
  }

  app.post(
    '/v3/auth/r/order/:pair/trades',
    {
      preValidation: v3Auth(deps.auth, 'read'),
      schema: {
        tags: ['v3 private'],
        summary: 'Trades of one order; the path part is {market}:{order_id}',
        security: v3Security,
        headers: V3AuthHeaders,
        params: Type.Object({ pair: Type.String({ pattern: '^[a-zA-Z0-9]{1,24}:[0-9]{1,15}$' }) }),
        body: Type.Object({}),
        response: { 200: Type.Array(V3TradeSchema), ...errorResponses },
      },
    },
    async (request) => {
      const [marketId = '', rawId = ''] = request.params.pair.split(':');
      const m = market(marketId);
      const order = await orderById(deps.db, orderIdOf(rawId));
      if (!order || order.accountId !== request.auth!.accountId || order.market !== m.id) {
        throw new ApiError('order_not_found', `order ${rawId} not found in market ${m.id}`);
      }
      const trades = await tradesOfOrder(deps.db, order.id);
      return trades.map((trade) => v3Trade(m, trade, order));
    },
  );

  app.post(
    '/v3/order/cancel',
    {
      // The nonce is recorded in the cancel's own batch, as for orders. The multi-cancel below
      // records it first: its cancels go to several batches, and a replay must run none of them.
      preValidation: v3Auth(deps.auth, 'trade', { deferNonce: true }),
      onSend: recordDeferredNonce(deps.auth),
      schema: {
        tags: ['v3 private'],
        summary: 'Cancel an order',
        security: v3Security,
        headers: V3AuthHeaders,
        body: V3CancelBody,
        response: { 200: CancelledSchema, ...errorResponses },
      },
    },
    (request) =>
      cancelV3Order(deps, { accountId: request.auth!.accountId, nonce: request.deferredNonce }, request.body),
  );

  app.post(
    '/v3/order/amend',
    {
      preValidation: v3Auth(deps.auth, 'trade', { deferNonce: true }),
      onSend: recordDeferredNonce(deps.auth),
      schema: {
        tags: ['v3 private'],
        summary:
          'Amend a resting order, same id: a smaller amount keeps its queue place, a new price or larger amount moves it to the back',
        security: v3Security,
        headers: V3AuthHeaders,
        body: V3AmendBody,
        response: { 200: V3OrderSchema, ...errorResponses },
      },
    },
    (request) =>
      amendV3Order(deps, { accountId: request.auth!.accountId, nonce: request.deferredNonce }, request.body),
  );

  for (const url of ['/v3/order/cancel/multy', '/v3/order/cancel/multi']) {
    app.post(
      url,
      {
        preValidation: v3Auth(deps.auth, 'trade'),
        schema: {
          tags: ['v3 private'],
          summary:
            'Cancel several orders; answers with the cancelled ones (ids that could not be cancelled are left out)',
          security: v3Security,
          headers: V3AuthHeaders,
          body: Type.Object({
            order_ids: Type.Optional(Type.Union([Type.Array(IdInput), Type.String()])),
            // ccxt's cancelAllOrders for this API style (bitfinex2) sends {all: 1} here (src/cancel-all/).
            all: Type.Optional(
              Type.Literal(1, { description: '1: every open order, as /v3/order/cancel/all' }),
            ),
          }),
          response: { 200: Type.Array(CancelledSchema), ...errorResponses },
        },
      },
      async (request) => {
        if (request.body.all === 1 && request.body.order_ids === undefined)
          return cancelAllOrders(deps, { accountId: request.auth!.accountId }, {});
        const ids = orderIdsOf(request.body.order_ids);
        const accountId = request.auth!.accountId;
        const outcomes = await Promise.all(ids.map((id) => deps.orders.cancel(accountId, id)));
        return outcomes.flatMap((outcome) =>
          outcome.ok ? [cancelledOrder(market(outcome.order.market), outcome.order)] : [],
        );
      },
    );
  }
}
