import { type BodyCheck, strictBodyValidator } from '@platform/http-edge/strict-body-validation';
import type { Static, TSchema } from 'typebox';
import { CancelAllBody, cancelAllOrders } from '../cancel-all/routes.js';
import type { RouteDeps } from '../http/deps.js';
import { getOrder, OrderGetBody } from '../orders/client-order-ids.js';
import type { OrderCaller } from '../orders/entry.js';
import {
  amendV3Order,
  cancelV3Order,
  submitV3Order,
  V3AmendBody,
  V3CancelBody,
  V3SubmitBody,
} from '../orders/v3-orders.js';

/**
 * Order entry over the feed (Binance's WebSocket API): each operation is a REST route's handler with
 * that route's body schema, checked the way the route checks it (strict-body-validation), and its
 * scope. The socket's `auth` stands for the signature and nonce; the route's request limits apply
 * (operation-limits.ts); a refusal carries the route's error. On a cluster node an order goes to the
 * market's owner exactly as the route's does (OrderService.place).
 *
 * Adding an operation is one entry here mapped to its route's handler.
 */
export interface Operation {
  /** The REST route it is (its request limits and its documentation). */
  readonly route: string;
  /** The key scope the route needs. */
  readonly scope: 'read' | 'trade';
  /** Checks `params` as the route checks its body (unknown fields are dropped, as there). */
  readonly check: (params: unknown) => BodyCheck;
  /** The route's handler: what it answers is the operation's `result`. */
  readonly run: (deps: RouteDeps, caller: OrderCaller, params: unknown) => Promise<unknown>;
}

function operation<S extends TSchema>(
  route: string,
  scope: Operation['scope'],
  body: S,
  handler: (deps: RouteDeps, caller: OrderCaller, body: Static<S>) => Promise<unknown>,
): Operation {
  return {
    route,
    scope,
    check: strictBodyValidator(body),
    // `check` passed first: the params are the body the handler's schema types.
    run: (deps, caller, params) => handler(deps, caller, params as Static<S>),
  };
}

export const OPERATIONS: Readonly<Record<string, Operation>> = {
  'order.submit': operation('/v3/auth/w/order/submit', 'trade', V3SubmitBody, submitV3Order),
  'order.cancel': operation('/v3/order/cancel', 'trade', V3CancelBody, cancelV3Order),
  'order.amend': operation('/v3/order/amend', 'trade', V3AmendBody, amendV3Order),
  'order.get': operation('/v3/auth/r/order/by-client-id', 'read', OrderGetBody, getOrder),
  'order.cancel_all': operation('/v3/order/cancel/all', 'trade', CancelAllBody, cancelAllOrders),
};
