import { Type } from 'typebox';
import { PaygateClient } from '../fiat/client.js';
import { GatewayFees } from '../fiat/live-fees.js';
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
  // Fiat fees as the payment gateway will charge them (its prerequests, cached a minute; src/fiat/live-fees.ts).
  const fiatCurrencies = deps.reference.currencies.filter((c) => !c.coin).map((c) => c.code);
  const live = new GatewayFees(
    new PaygateClient(deps.paygate, deps.now),
    deps.reference.fees,
    fiatCurrencies,
    deps.now,
  );
  app.get(
    '/v3/fees',
    {
      schema: {
        tags: ['v3 public'],
        summary: 'Fees',
        response: { 200: Type.Array(FeeEntry), ...errorResponses },
      },
    },
    async () => live.entries(),
  );
}
