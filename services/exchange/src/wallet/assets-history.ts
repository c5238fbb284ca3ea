import { Type } from 'typebox';
import { v3Auth } from '../auth/authenticate.js';
import type { RouteDeps } from '../http/deps.js';
import { errorResponses, V3AuthHeaders, v3Security } from '../http/schemas.js';
import type { App } from '../http/typed.js';
import { assetsHistory, HISTORY_MAX_PER_PAGE } from '../wallet/history.js';

const Int32 = (options: object = {}) => Type.Integer({ minimum: 0, maximum: 2_147_483_647, ...options });

const HistoryBody = Type.Object({
  currency_ids: Type.Optional(Type.Array(Int32(), { maxItems: 100 })),
  statuses: Type.Optional(
    Type.Array(Type.Union([Type.Literal('done'), Type.Literal('pending'), Type.Literal('canceled')]), {
      maxItems: 3,
    }),
  ),
  date_from: Type.Optional(Int32({ description: 'seconds, inclusive' })),
  date_to: Type.Optional(Int32({ description: 'seconds, inclusive' })),
  page: Type.Optional(Int32({ minimum: 1, default: 1 })),
  per_page: Type.Optional(Int32({ minimum: 1, maximum: HISTORY_MAX_PER_PAGE, default: 20 })),
  order_by: Type.Optional(Type.Union([Type.Literal('created_at'), Type.Literal('amount')])),
  order_dir: Type.Optional(Type.Union([Type.Literal('asc'), Type.Literal('desc')])),
});

const HistoryResult = Type.Object({
  total_items: Type.Integer(),
  items: Type.Array(
    Type.Object({
      id: Type.Integer(),
      type: Type.Union([Type.Literal('deposit'), Type.Literal('withdraw')]),
      created_at: Type.String(),
      destination: Type.String(),
      currency: Type.Integer({ description: 'currency id' }),
      amount: Type.Number(),
      status: Type.Union([Type.Literal('done'), Type.Literal('pending'), Type.Literal('canceled')]),
    }),
  ),
  currencies: Type.Array(Type.String()),
});

const PATHS = [
  {
    path: '/v3/auth/assets-history',
    types: ['deposit', 'withdraw'] as const,
    summary: 'Deposits and withdrawals',
  },
  { path: '/v3/auth/assets-history/withdraws', types: ['withdraw'] as const, summary: 'Withdrawals' },
  { path: '/v3/auth/assets-history/deposits', types: ['deposit'] as const, summary: 'Deposits' },
];

/** Combined deposit/withdrawal history with the spec's filters, paging and sorting. */
export function assetsHistoryRoutes(app: App, deps: RouteDeps): void {
  for (const { path, types, summary } of PATHS) {
    app.post(
      path,
      {
        preValidation: v3Auth(deps.auth, 'read'),
        schema: {
          tags: ['v3 wallet'],
          summary: `Assets history: ${summary.toLowerCase()} (per_page at most ${HISTORY_MAX_PER_PAGE})`,
          security: v3Security,
          headers: V3AuthHeaders,
          body: HistoryBody,
          response: { 200: HistoryResult, ...errorResponses },
        },
      },
      async (request) => {
        const body = request.body;
        const byId = new Map(deps.reference.currencies.map((c) => [c.id, c.code]));
        return assetsHistory(deps.db, deps.reference, {
          accountId: request.auth!.accountId,
          types,
          ...(body.currency_ids
            ? { currencies: body.currency_ids.map((id) => byId.get(id) ?? `#${id}`) }
            : {}),
          ...(body.statuses ? { statuses: body.statuses } : {}),
          ...(body.date_from !== undefined ? { dateFrom: body.date_from } : {}),
          ...(body.date_to !== undefined ? { dateTo: body.date_to } : {}),
          page: body.page ?? 1,
          perPage: body.per_page ?? 20,
          orderBy: body.order_by ?? 'created_at',
          orderDir: body.order_dir ?? 'desc',
        });
      },
    );
  }
}
