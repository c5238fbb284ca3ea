import { Type } from 'typebox';
import type { RouteDeps } from '../http/deps.js';
import { errorResponses } from '../http/schemas.js';
import type { App } from '../http/typed.js';

const Market = Type.Object({
  id: Type.String({ description: 'market key (pair), e.g. btcuah' }),
  base_unit: Type.String(),
  quote_unit: Type.String(),
  base_precision: Type.Integer(),
  quote_precision: Type.Integer(),
  display_precision: Type.Integer(),
  price_change: Type.Number({ description: '24 h price change in percent (0 until trading exists)' }),
});

export function marketRoutes(app: App, deps: RouteDeps): void {
  app.get(
    '/v3/markets',
    {
      schema: {
        tags: ['v3 public'],
        summary: 'Markets',
        response: { 200: Type.Array(Market), ...errorResponses },
      },
    },
    async () => deps.reference.markets,
  );
}
