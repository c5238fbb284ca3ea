import { type Static, Type } from 'typebox';
import { v3Auth } from '../auth/authenticate.js';
import { ApiError } from '../errors.js';
import type { RouteDeps } from '../http/deps.js';
import { errorResponses, V3AuthHeaders, v3Security } from '../http/schemas.js';
import type { App } from '../http/typed.js';
import type { OrderCaller } from '../orders/entry.js';
import { cancelledOrder } from '../orders/format.js';
import { CancelledSchema } from '../orders/v3-orders.js';
import { MAX_TIMEOUT_S, switchAnswer, timeoutSeconds, triggerAt } from './rules.js';
import { cancelOrders } from './service.js';
import { armSwitch, openOrdersOfAccount } from './store.js';

/** The body of `POST /v3/order/cancel/all` (and of the feed's `order.cancel_all`). */
export const CancelAllBody = Type.Object({
  market: Type.Optional(
    Type.String({ minLength: 1, maxLength: 24, description: 'only this market; default every market' }),
  ),
  symbol: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 24,
      description: 'the same as market (order submit names it so)',
    }),
  ),
});

/**
 * The handler of `POST /v3/order/cancel/all`: every open order of the caller's account (all its keys),
 * of one market or all, cancelled through the normal path; answers the cancelled order objects as
 * `cancel/multy` does (an order that ended meanwhile is left out).
 */
export async function cancelAllOrders(
  deps: RouteDeps,
  caller: OrderCaller,
  body: Static<typeof CancelAllBody>,
): Promise<ReturnType<typeof cancelledOrder>[]> {
  // Both named differently would cancel one market's orders where the caller may have meant the other's.
  if (body.market !== undefined && body.symbol !== undefined && body.market !== body.symbol)
    throw new ApiError('validation_failed', 'market and symbol name different markets: give one of them');
  const name = body.market ?? body.symbol;
  const market = name === undefined ? undefined : deps.orders.market(name);
  if (name !== undefined && !market) throw new ApiError('unknown_market', `unknown market "${name}"`);
  const ids = await openOrdersOfAccount(deps.db, caller.accountId, market?.id);
  const outcomes = await cancelOrders(deps.orders, caller.accountId, ids);
  const cancelled: ReturnType<typeof cancelledOrder>[] = [];
  for (const outcome of outcomes) {
    // A cancel that could not be run (503 while its market changes hands) fails the call, as one
    // cancel does; the ones run are cancelled and a retry finds the rest.
    if (outcome.status === 'rejected') throw outcome.reason;
    if (outcome.value.ok) {
      const order = outcome.value.order;
      cancelled.push(cancelledOrder(deps.orders.market(order.market)!, order));
    }
  }
  return cancelled;
}

const SwitchAnswer = Type.Object({
  current_time: Type.String({ description: 'RFC 3339' }),
  trigger_time: Type.String({ description: 'RFC 3339; "0" when disabled (timeout 0), as Kraken answers' }),
});

/** Cancel all and the dead-man's switch (issue 43). */
export function cancelAllRoutes(app: App, deps: RouteDeps): void {
  app.post(
    '/v3/order/cancel/all',
    {
      preValidation: v3Auth(deps.auth, 'trade'),
      schema: {
        tags: ['v3 private'],
        summary: 'Cancel every open order of the account (all its API keys), of one market or all',
        description:
          "Answers the cancelled order objects as /v3/order/cancel/multy does. ccxt's cancelAllOrders " +
          '({"all": 1} on /v3/order/cancel/multy or /multi) does the same over every market.\n\n' +
          'Try it: `npm run -s call -w services/exchange -- POST /v3/order/cancel/all \'{"market":"btcuah"}\'`',
        security: v3Security,
        headers: V3AuthHeaders,
        body: CancelAllBody,
        response: { 200: Type.Array(CancelledSchema), ...errorResponses },
      },
    },
    (request) => cancelAllOrders(deps, { accountId: request.auth!.accountId }, request.body),
  );

  app.post(
    '/v3/order/cancel-all-after',
    {
      preValidation: v3Auth(deps.auth, 'trade'),
      schema: {
        tags: ['v3 private'],
        summary:
          "Dead-man's switch of this API key (Kraken's CancelAllOrdersAfter): unless renewed within timeout seconds, every open order placed with this key is cancelled",
        description:
          'Each call replaces the trigger; 0 disables it (trigger_time "0"). When no call renews it before ' +
          'trigger_time, every open order placed with this key is cancelled once, within 1 s of the trigger ' +
          '(the trigger is stored: it survives restarts; in a cluster one node fires it).\n\n' +
          'Try it: `npm run -s call -w services/exchange -- POST /v3/order/cancel-all-after \'{"timeout":60}\'`',
        security: v3Security,
        headers: V3AuthHeaders,
        body: Type.Object({
          timeout: Type.Union([Type.Integer(), Type.String()], {
            description: `seconds until the trigger, 0..${MAX_TIMEOUT_S}; 0 disables the switch`,
          }),
        }),
        response: { 200: SwitchAnswer, ...errorResponses },
      },
    },
    async (request) => {
      const timeout = timeoutSeconds(request.body.timeout);
      if (!timeout.ok) {
        throw new ApiError('validation_failed', `timeout must be an integer of 0..${MAX_TIMEOUT_S} seconds`);
      }
      const now = deps.now();
      const trigger = triggerAt(now, timeout.seconds);
      await armSwitch(deps.db, request.auth!.keyId, request.auth!.accountId, trigger, now);
      return switchAnswer(now, trigger);
    },
  );
}
