import { Type } from 'typebox';
import { ApiError } from '../errors.js';
import { viewChecksum } from '../feed/book-levels.js';
import type { RouteDeps } from '../http/deps.js';
import { errorResponses, v2Paths } from '../http/schemas.js';
import type { App } from '../http/typed.js';
import { TickerText } from '../market-stats/ticker-text.js';
import { v2Trade } from '../orders/format.js';
import { v2Ticker, v3Book } from '../orders/market-data.js';
import type { TradingMarket } from '../orders/markets.js';
import { marketTrades } from '../orders/store.js';

const V2Ticker = Type.Object({
  at: Type.Integer({ description: 'seconds' }),
  ticker: Type.Object({
    buy: Type.String(),
    sell: Type.String(),
    low: Type.String(),
    high: Type.String(),
    last: Type.String(),
    vol: Type.String({ description: '24 h base volume' }),
    amount: Type.String({ description: '24 h quote volume' }),
  }),
});

function limitOf(raw: string | undefined, fallback: number, max: number): number {
  if (raw === undefined) return fallback;
  if (!/^\d+$/.test(raw) || Number(raw) < 1)
    throw new ApiError('validation_failed', 'limit must be a positive integer');
  return Math.min(Number(raw), max);
}

/** Public market data: v3 tickers and book; v2 tickers, depth and trades (each also with `.json`). */
export function marketDataRoutes(app: App, deps: RouteDeps): void {
  const tickerText = new TickerText(deps.marketStats);
  const market = (id: string): TradingMarket => {
    const found = deps.orders.market(id);
    if (!found) throw new ApiError('unknown_market', `unknown market "${id}"`);
    return found;
  };
  app.get(
    '/v3/tickers',
    {
      schema: {
        tags: ['v3 public'],
        summary:
          'Tickers: [symbol, bid, bid volume, ask, ask volume, 24h change, 24h change %, last, 24h volume, 24h high, 24h low]',
        querystring: Type.Object({
          symbols: Type.Optional(
            Type.String({ description: 'comma-separated market ids, or ALL (default)' }),
          ),
        }),
        response: {
          200: Type.Array(Type.Array(Type.Union([Type.String(), Type.Number()]))),
          ...errorResponses,
        },
      },
    },
    async (request, reply) => {
      const raw = request.query.symbols ?? 'ALL';
      const all = raw.toUpperCase() === 'ALL';
      const wanted = all
        ? []
        : raw
            .split(',')
            .map((s) => s.trim().toLowerCase())
            .filter(Boolean);
      for (const id of wanted) market(id);
      // Text kept per market until it changes (ticker-text.ts): the schema documents, the cache serialises.
      const text = tickerText.v3List(all ? deps.marketStats.ids : wanted, deps.now());
      return reply.type('application/json; charset=utf-8').send(text);
    },
  );
  app.get(
    '/v3/book/:symbol',
    {
      schema: {
        tags: ['v3 public'],
        summary:
          'Order book: [price, volume, orders]; volume > 0 bid, < 0 ask; grouped per display_precision',
        params: Type.Object({ symbol: Type.String({ maxLength: 24 }) }),
        response: {
          200: {
            ...Type.Array(Type.Array(Type.Number())),
            headers: Type.Object({
              'x-book-seq': Type.String({
                description:
                  "the command log sequence number the book is at (the live feed's `seq`, docs/feed.md)",
              }),
              'x-book-checksum': Type.String({
                description:
                  "CRC32 of the best 10 asks then the best 10 bids, Kraken's scheme (docs/feed.md, Checksums): the `checksum` of the feed's book frames",
              }),
            }),
          },
          ...errorResponses,
        },
      },
    },
    async (request, reply) => {
      const m = market(request.params.symbol);
      const { book, seq } = deps.marketStats.bookAt(m.id);
      void reply.header('x-book-seq', String(seq));
      void reply.header('x-book-checksum', String(viewChecksum(m, book)));
      return v3Book(book, m);
    },
  );
  for (const url of v2Paths('/api/v2/tickers')) {
    app.get(
      url,
      {
        schema: {
          tags: ['v2'],
          summary: 'Tickers of every market',
          response: { 200: Type.Record(Type.String(), V2Ticker), ...errorResponses },
        },
      },
      async () => {
        const now = deps.now();
        const list = deps.marketStats.summaries(now);
        return Object.fromEntries(list.map((s) => [s.market.id, v2Ticker(s, now)]));
      },
    );
  }
  // One route for both spellings: the parameter of `/tickers/btcuah.json` is `btcuah.json`.
  app.get(
    '/api/v2/tickers/:market',
    {
      schema: {
        tags: ['v2'],
        summary: 'Ticker of one market',
        params: Type.Object({ market: Type.String({ maxLength: 24 }) }),
        response: { 200: V2Ticker, ...errorResponses },
      },
    },
    async (request) => {
      const m = market(request.params.market.replace(/\.json$/, ''));
      const now = deps.now();
      return v2Ticker(deps.marketStats.summary(m.id, now), now);
    },
  );
  for (const url of v2Paths('/api/v2/depth')) {
    app.get(
      url,
      {
        schema: {
          tags: ['v2'],
          summary: 'Order book: [price, volume] per level, best first',
          querystring: Type.Object({
            market: Type.String(),
            limit: Type.Optional(Type.String({ description: 'levels per side, default 300' })),
          }),
          response: {
            200: Type.Object({
              timestamp: Type.Integer(),
              asks: Type.Array(Type.Array(Type.String())),
              bids: Type.Array(Type.Array(Type.String())),
            }),
            ...errorResponses,
          },
        },
      },
      async (request) => {
        const m = market(request.query.market);
        const depth = deps.marketStats.book(m.id);
        const levels = limitOf(request.query.limit, 300, 10_000);
        const level = ([price, volume]: readonly [bigint, bigint, number]) => [
          m.formatPrice(price),
          m.formatAmount(volume),
        ];
        return {
          timestamp: Math.floor(deps.now() / 1000),
          asks: depth.asks.slice(0, levels).map(level),
          bids: depth.bids.slice(0, levels).map(level),
        };
      },
    );
  }
  for (const url of v2Paths('/api/v2/trades')) {
    app.get(
      url,
      {
        schema: {
          tags: ['v2'],
          summary: 'Recent trades of a market, newest first',
          querystring: Type.Object({
            market: Type.String(),
            limit: Type.Optional(Type.String({ description: 'default 50, at most 1000' })),
          }),
          response: {
            200: Type.Array(
              Type.Object({
                id: Type.Integer(),
                price: Type.String(),
                volume: Type.String(),
                funds: Type.String(),
                market: Type.String(),
                created_at: Type.String(),
                side: Type.Null(),
                self_trade: Type.Boolean({ description: 'both orders are one account’s (stp none)' }),
              }),
            ),
            ...errorResponses,
          },
        },
      },
      async (request) => {
        const m = market(request.query.market);
        const rows = await marketTrades(deps.db, m.id, limitOf(request.query.limit, 50, 1000));
        return rows.map((row) => v2Trade(m, row));
      },
    );
  }
}
