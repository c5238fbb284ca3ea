import { Type } from 'typebox';
import { v3Auth } from '../auth/authenticate.js';
import type { Sql } from '../db/database.js';
import { ApiError } from '../errors.js';
import type { RouteDeps } from '../http/deps.js';
import { errorResponses, V3AuthHeaders, v3Security } from '../http/schemas.js';
import type { App } from '../http/typed.js';
import { keyOf, type OrderCaller, type OrderInput, orderRequest } from './entry.js';
import { type V3Order, v3Order } from './format.js';
import type { EntryOutcome } from './requests.js';
import { orderById } from './store.js';

/**
 * A client's own id for its order (`client_order_id`), unique per account (100_client_order_ids.sql):
 * reserved before the order goes to its market's writer, a second use refused; the order's batch
 * records which order it named, so a client that lost the answer (a dropped connection) asks for
 * the order by it. The order entry is unchanged for orders without one.
 */

export const ClientOrderIdSchema = Type.String({
  pattern: '^[A-Za-z0-9._:-]{1,64}$',
  description:
    'your id for the order, unique per account (1 to 64 letters, digits, `.`, `_`, `:`, `-`); a second use is refused with client_order_id_used',
});

/**
 * Places an order under a client order id: the input is checked first (a malformed order does not
 * use up the id), then the id is reserved (refused when the account used it before), then the order
 * goes to its writer with the id, whose batch records the order under it. A refusal is noted with
 * the reservation, so that asking for the id later tells the client why.
 */
export async function placeWithClientId(
  deps: Pick<RouteDeps, 'db' | 'orders' | 'now'>,
  caller: OrderCaller,
  input: OrderInput,
  clientOrderId: string,
): Promise<EntryOutcome> {
  const parsed = orderRequest(deps.orders, caller.accountId, input);
  if (!parsed.ok) return parsed;
  if (!(await reserve(deps.db, caller.accountId, clientOrderId, parsed.market, deps.now())))
    throw new ApiError(
      'client_order_id_used',
      `client_order_id "${clientOrderId}" was used before by this account; ask for its order with order.get or POST /v3/auth/r/order/by-client-id`,
    );
  const outcome = await deps.orders.place(
    parsed.market,
    { ...parsed.request, clientOrderId, ...keyOf(caller) },
    caller.nonce,
  );
  if (!outcome.ok) {
    // Best effort: without the note, the id reads as "never placed", which is as true for the client.
    await deps.db
      .query(
        'UPDATE client_order_ids SET refused = $3 WHERE account_id = $1 AND client_order_id = $2 AND order_id IS NULL',
        [caller.accountId, clientOrderId, `${outcome.code}: ${outcome.message}`],
      )
      .catch(() => {});
  }
  return outcome;
}

/** Takes the id for the account; false when it was taken before. */
async function reserve(db: Sql, accountId: number, clientOrderId: string, market: string, now: number) {
  const { rows } = await db.query(
    `INSERT INTO client_order_ids (account_id, client_order_id, market, created_at) VALUES ($1, $2, $3, $4)
     ON CONFLICT DO NOTHING RETURNING 1`,
    [accountId, clientOrderId, market, now],
  );
  return rows.length === 1;
}

/**
 * The order of the account under `clientOrderId`, as stored now; `order_not_found` saying why when
 * there is none: never used, refused (with the refusal), or not placed (its request was lost before
 * its batch, or its batch has not committed yet).
 */
export async function orderOfClientId(
  deps: Pick<RouteDeps, 'db' | 'orders'>,
  accountId: number,
  clientOrderId: string,
): Promise<V3Order> {
  const { rows } = await deps.db.query<{ order_id: string | null; refused: string | null }>(
    'SELECT order_id::text, refused FROM client_order_ids WHERE account_id = $1 AND client_order_id = $2',
    [accountId, clientOrderId],
  );
  const reservation = rows[0];
  if (!reservation) throw new ApiError('order_not_found', `no order has client_order_id "${clientOrderId}"`);
  if (reservation.order_id === null)
    throw new ApiError(
      'order_not_found',
      reservation.refused === null
        ? `the order with client_order_id "${clientOrderId}" was not placed (or its batch has not committed yet)`
        : `the order with client_order_id "${clientOrderId}" was refused: ${reservation.refused}`,
    );
  return ownOrder(deps, accountId, Number(reservation.order_id));
}

/** An order of the account by its id, as stored now (another account's is `order_not_found`, as a missing one). */
export async function ownOrder(
  deps: Pick<RouteDeps, 'db' | 'orders'>,
  accountId: number,
  orderId: number,
): Promise<V3Order> {
  const order = await orderById(deps.db, orderId);
  const market = order && deps.orders.market(order.market);
  if (!order || !market || order.accountId !== accountId)
    throw new ApiError('order_not_found', `order ${orderId} not found`);
  return v3Order(market, order);
}

/** The body of the feed's `order.get`: an order by its id or by its client order id (exactly one). */
export const OrderGetBody = Type.Object({
  order_id: Type.Optional(
    Type.Union([
      Type.Integer({ minimum: 1, maximum: 999_999_999_999_999 }),
      Type.String({ pattern: '^[0-9]{1,15}$' }),
    ]),
  ),
  client_order_id: Type.Optional(ClientOrderIdSchema),
});

/** `order.get`: one order of the account, by `order_id` or by `client_order_id`. */
export function getOrder(
  deps: Pick<RouteDeps, 'db' | 'orders'>,
  caller: OrderCaller,
  body: { readonly order_id?: number | string; readonly client_order_id?: string },
): Promise<V3Order> {
  if ((body.order_id === undefined) === (body.client_order_id === undefined))
    throw new ApiError('validation_failed', 'order.get takes order_id or client_order_id (one of them)');
  if (body.client_order_id !== undefined)
    return orderOfClientId(deps, caller.accountId, body.client_order_id);
  return ownOrder(deps, caller.accountId, Number(body.order_id));
}

/** `POST /v3/auth/r/order/by-client-id`: the order placed under a client order id. */
export function clientOrderRoutes(app: App, deps: RouteDeps): void {
  app.post(
    '/v3/auth/r/order/by-client-id',
    {
      preValidation: v3Auth(deps.auth, 'read'),
      schema: {
        tags: ['v3 private'],
        summary:
          'The order placed under a client_order_id (the 18-item order, as stored now); 404 order_not_found saying whether it was refused or never placed',
        security: v3Security,
        headers: V3AuthHeaders,
        body: Type.Object({ client_order_id: ClientOrderIdSchema }),
        response: {
          200: Type.Array(Type.Union([Type.String(), Type.Number(), Type.Null()])),
          ...errorResponses,
        },
      },
    },
    (request) => orderOfClientId(deps, request.auth!.accountId, request.body.client_order_id),
  );
}
