import { Type } from 'typebox';
import type { RouteDeps } from '../http/deps.js';
import { errorResponses } from '../http/schemas.js';
import type { App } from '../http/typed.js';

export const Currency = Type.Object({
  id: Type.Integer(),
  code: Type.String(),
  name: Type.String(),
  has_memo: Type.Boolean(),
  icons: Type.Object({ std: Type.String(), xl: Type.String(), png_2x: Type.String(), png_3x: Type.String() }),
  coin: Type.Boolean(),
  explorer_link: Type.String({ description: 'URL template with the placeholder #{txid}' }),
  sort_order: Type.Integer(),
  precision: Type.Object({ real: Type.Integer(), trade: Type.Integer() }),
});

export function currencyRoutes(app: App, deps: RouteDeps): void {
  app.get(
    '/v3/currencies',
    {
      schema: {
        tags: ['v3 public'],
        summary: 'Currencies',
        response: { 200: Type.Array(Currency), ...errorResponses },
      },
    },
    async () => deps.reference.currencies,
  );
}
