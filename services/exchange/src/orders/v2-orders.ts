import { Type } from 'typebox';
import { apiKeyStp } from '../apikeys/store.js';
import { recordDeferredNonce, v2Auth } from '../auth/authenticate.js';
import { ApiError } from '../errors.js';
import type { RouteDeps } from '../http/deps.js';
import { announcePage, NEXT_PAGE, pageOf } from '../http/paging.js';
import { errorResponses, PageHeaders, V2AuthQuery, v2Paths } from '../http/schemas.js';
import type { App } from '../http/typed.js';
import { cancelOrder, placeOrder } from '../orders/entry.js';
import { v2Order, v2Trade } from '../orders/format.js';
import type { TradingMarket } from '../orders/markets.js';
import { listOrders, orderById, tradesOfAccount } from '../orders/store.js';
import { acceptedOrder } from './order-outcome.js';

export const V2Order = Type.Object(
  {
    id: Type.Integer(),
    side: Type.String({ description: 'buy or sell' }),
    ord_type: Type.String({ description: 'limit, market, market_by_quote or limit_stop_loss' }),
    price: Type.Union([Type.String(), Type.Null()]),
    avg_price: Type.String(),
    state: Type.String({ description: 'wait (open), done or cancel' }),
    market: Type.String(),
    created_at: Type.String({ description: 'ISO 8601' }),
    volume: Type.String(),
    remaining_volume: Type.String(),
    executed_volume: Type.String(),
    trades_count: Type.Integer(),
    reason: Type.Union([Type.String(), Type.Null()], {
      description:
        'self_trade_prevented, fok_not_filled or ioc_rest_cancelled when self-trade prevention, FOK or IOC ended (or decrement reduced) the order; null otherwise',
    }),
    stp: Type.Union([Type.String(), Type.Null()], {
      description: 'the self-trade prevention mode when reason is self_trade_prevented; null otherwise',
    }),
  },
  { description: 'Peatio order' },
);

const V2Trade = Type.Object({
  id: Type.Integer(),
  price: Type.String(),
  volume: Type.String(),
  funds: Type.String(),
  market: Type.String(),
  created_at: Type.String(),
  side: Type.Union([Type.String(), Type.Null()]),
  order_id: Type.Optional(Type.Integer()),
  self_trade: Type.Boolean({ description: 'both orders are one account’s (stp none)' }),
});

const Signed = { ...V2AuthQuery };
const optional = <T extends Record<string, unknown>>(props: T) =>
  Object.fromEntries(Object.entries(props).map(([k, v]) => [k, Type.Optional(v as never)]));

function limitOf(raw: string | undefined, fallback: number, max: number): number {
  if (raw === undefined) return fallback;
  if (!/^\d+$/.test(raw) || Number(raw) < 1)
    throw new ApiError('validation_failed', 'limit must be a positive integer');
  return Math.min(Number(raw), max);
}

/** Largest v2 order page, and largest page number (the OFFSET a page costs grows with it). */
export const V2_ORDERS_MAX = 1000;
export const V2_PAGE_MAX = 1000;

function pageNumberOf(raw: string | undefined): number {
  if (raw === undefined) return 1;
  if (!/^\d{1,6}$/.test(raw) || Number(raw) < 1 || Number(raw) > V2_PAGE_MAX)
    throw new ApiError('validation_failed', `page must be an integer from 1 to ${V2_PAGE_MAX}`);
  return Number(raw);
}

function positiveId(raw: string): number {
  if (!/^\d{1,15}$/.test(raw) || Number(raw) < 1)
    throw new ApiError('validation_failed', 'id must be a positive integer');
  return Number(raw);
}

/** v2 (Peatio) order entry and the private order and trade queries, each also with `.json`. */
export function v2OrderRoutes(app: App, deps: RouteDeps): void {
  const market = (id: string): TradingMarket => {
    const found = deps.orders.market(id);
    if (!found) throw new ApiError('unknown_market', `unknown market "${id}"`);
    return found;
  };
  for (const url of v2Paths('/api/v2/orders')) {
    app.post(
      url,
      {
        // The tonce is recorded in the order's own transaction (group commit), see authenticate.ts.
        preValidation: v2Auth(deps.auth, 'trade', { deferNonce: true }),
        onSend: recordDeferredNonce(deps.auth),
        schema: {
          tags: ['v2'],
          summary: 'Create an order (form body, signed)',
          body: Type.Object({
            ...optional(Signed),
            market: Type.String(),
            side: Type.Union([Type.Literal('buy'), Type.Literal('sell')]),
            volume: Type.String({ description: 'base amount (quote amount for market_by_quote)' }),
            price: Type.Optional(Type.String()),
            stop_price: Type.Optional(Type.String()),
            ord_type: Type.Optional(
              Type.Union(
                ['limit', 'market', 'market_by_quote', 'limit_stop_loss'].map((t) => Type.Literal(t)),
              ),
            ),
          }),
          response: { 201: V2Order, ...errorResponses },
        },
      },
      async (request, reply) => {
        const body = request.body;
        const type = (body.ord_type ?? 'limit') as 'limit' | 'market' | 'market_by_quote' | 'limit_stop_loss';
        const order = acceptedOrder(
          await placeOrder(
            deps.orders,
            request.auth!.accountId,
            {
              market: body.market,
              side: body.side,
              type,
              amount: body.volume,
              price: body.price,
              stopPrice: body.stop_price,
              // Peatio's form has no stp: the key's default applies (key update --stp).
              stp: await apiKeyStp(deps.db, request.auth!.keyId),
            },
            request.deferredNonce,
          ),
        );
        reply.code(201);
        return v2Order(market(order.market), order);
      },
    );
  }
  for (const url of v2Paths('/api/v2/order/delete')) {
    app.post(
      url,
      {
        // The tonce is recorded in the cancel's own batch, as for orders.
        preValidation: v2Auth(deps.auth, 'trade', { deferNonce: true }),
        onSend: recordDeferredNonce(deps.auth),
        schema: {
          tags: ['v2'],
          summary: 'Cancel an order; answers with the order as it was before cancelling',
          body: Type.Object({ ...optional(Signed), id: Type.String() }),
          response: { 200: V2Order, ...errorResponses },
        },
      },
      async (request) => {
        const order = acceptedOrder(
          await cancelOrder(
            deps.orders,
            request.auth!.accountId,
            positiveId(request.body.id),
            request.deferredNonce,
          ),
        );
        return v2Order(market(order.market), order, 'wait');
      },
    );
  }
  for (const url of v2Paths('/api/v2/orders')) {
    app.get(
      url,
      {
        preValidation: v2Auth(deps.auth, 'read'),
        schema: {
          tags: ['v2'],
          summary: 'Orders of a market (default: open ones)',
          querystring: Type.Object({
            ...Signed,
            market: Type.String(),
            state: Type.Optional(Type.Union(['wait', 'done', 'cancel'].map((s) => Type.Literal(s)))),
            limit: Type.Optional(
              Type.String({ description: `orders per page; default 100, at most ${V2_ORDERS_MAX}` }),
            ),
            page: Type.Optional(
              Type.String({
                description: `1-based page of that size (Peatio); default 1, at most ${V2_PAGE_MAX}`,
              }),
            ),
          }),
          response: {
            200: {
              ...Type.Array(V2Order),
              headers: PageHeaders(NEXT_PAGE, 'the next page, when x-has-more'),
            },
            ...errorResponses,
          },
        },
      },
      async (request, reply) => {
        const m = market(request.query.market);
        const limit = limitOf(request.query.limit, 100, V2_ORDERS_MAX);
        const page = pageNumberOf(request.query.page);
        const rows = await listOrders(deps.db, {
          accountId: request.auth!.accountId,
          market: m.id,
          states: [(request.query.state ?? 'wait') as 'wait' | 'done' | 'cancel'],
          limit: limit + 1,
          offset: (page - 1) * limit,
          ascending: false,
          by: 'id',
        });
        const found = pageOf(rows, limit);
        announcePage(reply, found.more, [NEXT_PAGE, page + 1]);
        return found.items.map((row) => v2Order(m, row));
      },
    );
  }
  for (const url of v2Paths('/api/v2/order')) {
    app.get(
      url,
      {
        preValidation: v2Auth(deps.auth, 'read'),
        schema: {
          tags: ['v2'],
          summary: 'One order',
          querystring: Type.Object({ ...Signed, id: Type.String() }),
          response: { 200: V2Order, ...errorResponses },
        },
      },
      async (request) => {
        const order = await orderById(deps.db, positiveId(request.query.id));
        if (!order || order.accountId !== request.auth!.accountId) {
          throw new ApiError('order_not_found', `order ${request.query.id} not found`);
        }
        return v2Order(market(order.market), order);
      },
    );
  }
  for (const url of v2Paths('/api/v2/trades/my')) {
    app.get(
      url,
      {
        preValidation: v2Auth(deps.auth, 'read'),
        schema: {
          tags: ['v2'],
          summary: 'My trades in a market, newest first',
          querystring: Type.Object({
            ...Signed,
            market: Type.String(),
            limit: Type.Optional(Type.String({ description: 'default 50, at most 1000' })),
          }),
          response: { 200: Type.Array(V2Trade), ...errorResponses },
        },
      },
      async (request) => {
        const m = market(request.query.market);
        const accountId = request.auth!.accountId;
        const rows = await tradesOfAccount(deps.db, accountId, m.id, limitOf(request.query.limit, 50, 1000));
        return rows.map((row) => v2Trade(m, row, accountId));
      },
    );
  }
}
