import { Type } from 'typebox';
import { ApiError } from '../errors.js';
import type { RouteDeps } from '../http/deps.js';
import { errorResponses } from '../http/schemas.js';
import type { App } from '../http/typed.js';
import { wireCandle } from './candle.js';
import { candleStart, RESOLUTIONS, type Resolution } from './resolutions.js';
import { storedCandles } from './store.js';

/** Rows one answer holds at most, and the intervals a range covers by default. */
export const MAX_CANDLES = 1_000;

/** Unix seconds up to the end of year 9999: a larger value is a 400, not a database error. */
const SECONDS = { minimum: 0, maximum: 253_402_300_799 } as const;

/**
 * `GET /v3/candles/{market}`: candles of a market from its stored trades (store.ts), the same on
 * every node and after a restart.
 */
export function candleRoutes(app: App, deps: RouteDeps): void {
  app.get(
    '/v3/candles/:market',
    {
      schema: {
        tags: ['v3 public'],
        summary:
          'Candles: [time, open, high, low, close, volume] per interval with trades, oldest first, at most 1000 rows; time is the interval start (Unix s), volume in base',
        params: Type.Object({ market: Type.String({ maxLength: 24 }) }),
        querystring: Type.Object({
          resolution: Type.Union(
            Object.keys(RESOLUTIONS).map((r) => Type.Literal(r)),
            { description: 'interval length' },
          ),
          from: Type.Optional(
            Type.Integer({
              ...SECONDS,
              description:
                'Unix s: intervals starting at or after it; default the start of the 1000th interval before `to`',
            }),
          ),
          to: Type.Optional(
            Type.Integer({
              ...SECONDS,
              description: 'Unix s: intervals starting at or before it; default now',
            }),
          ),
        }),
        response: { 200: Type.Array(Type.Array(Type.Number())), ...errorResponses },
      },
    },
    async (request) => {
      const market = deps.orders.market(request.params.market);
      if (!market) throw new ApiError('unknown_market', `unknown market "${request.params.market}"`);
      const resolution = request.query.resolution as Resolution;
      const length = RESOLUTIONS[resolution];
      // Interval starts: `to` rounded down, `from` rounded up (an interval starting before it is left out).
      const last = candleStart(resolution, (request.query.to ?? Math.floor(deps.now() / 1000)) * 1000);
      const first =
        request.query.from === undefined
          ? last - (MAX_CANDLES - 1) * length
          : Math.ceil(request.query.from / length) * length;
      if (
        request.query.from !== undefined &&
        request.query.to !== undefined &&
        request.query.from > request.query.to
      )
        throw new ApiError('validation_failed', 'from must not be after to');
      const rows = await storedCandles(deps.db, market.id, resolution, Math.max(0, first), last, MAX_CANDLES);
      return rows.map((candle) => wireCandle(market, candle));
    },
  );
}
