import { Type } from 'typebox';
import type { RouteDeps } from '../http/deps.js';
import { errorResponses } from '../http/schemas.js';
import type { App } from '../http/typed.js';

const FiatFee = Type.Object({ type: Type.String(), amount: Type.String() });
const Asset = Type.Object({ amount: Type.Number(), currency: Type.String(), to_usd: Type.String() });

const FeeEntry = Type.Union([
  Type.Object(
    {
      code: Type.String(),
      category: Type.Literal('coin'),
      deposit_fees: Type.Array(FiatFee, { maxItems: 0 }),
      withdraw_fees: Type.Array(Type.Object({ type: Type.Literal('fixed'), asset: Asset })),
      min_deposit: Asset,
      min_withdraw: Asset,
    },
    { description: 'cryptocurrency entry' },
  ),
  Type.Object(
    {
      code: Type.String({ description: 'fiat method, e.g. payment_card' }),
      category: Type.String({ description: 'fiat currency' }),
      deposit_fees: Type.Array(FiatFee),
      withdraw_fees: Type.Array(FiatFee),
    },
    { description: 'fiat entry' },
  ),
]);

export function feeRoutes(app: App, deps: RouteDeps): void {
  app.get(
    '/v3/fees',
    {
      schema: {
        tags: ['v3 public'],
        summary: 'Fees',
        response: { 200: Type.Array(FeeEntry), ...errorResponses },
      },
    },
    async () => deps.reference.fees,
  );
}
