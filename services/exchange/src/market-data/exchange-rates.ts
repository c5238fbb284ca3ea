import { Type } from 'typebox';
import { ApiError } from '../errors.js';
import type { RouteDeps } from '../http/deps.js';
import { errorResponses } from '../http/schemas.js';
import type { App } from '../http/typed.js';
import { tradedRates } from '../orders/market-data.js';

const Rate = Type.Object(
  {
    currency: Type.String(),
    usd: Type.Number(),
    uah: Type.Number(),
    btc: Type.Number(),
    eur: Type.Number(),
    rub: Type.Number(),
  },
  { additionalProperties: Type.Number() },
);

/**
 * Exchange rates from the last trade prices (directly, or crossing through other markets), falling
 * back to the reference prices for pairs no chain of traded markets connects.
 */
export function exchangeRateRoutes(app: App, deps: RouteDeps): void {
  const rates = () => {
    const lasts = new Map<string, bigint>();
    for (const market of deps.orders.markets.values()) {
      const last = deps.marketStats.book(market.id).lastPrice;
      if (last) lasts.set(market.id, last);
    }
    return tradedRates(deps.reference, lasts, deps.orders.markets.values());
  };
  app.get(
    '/v3/exchange-rates',
    {
      schema: {
        tags: ['v3 public'],
        summary: 'Exchange rates of every currency',
        response: { 200: Type.Array(Rate), ...errorResponses },
      },
    },
    async () => rates(),
  );
  app.get(
    '/v3/exchange-rates/:currency',
    {
      schema: {
        tags: ['v3 public'],
        summary: 'Exchange rates of one currency',
        params: Type.Object({ currency: Type.String({ minLength: 1, maxLength: 16 }) }),
        response: { 200: Rate, ...errorResponses },
      },
    },
    async (request) => {
      const code = request.params.currency.toLowerCase();
      const rate = rates().find((r) => r.currency === code);
      if (!rate) throw new ApiError('unknown_currency', `unknown currency "${request.params.currency}"`);
      return rate;
    },
  );
}
