import { Type } from 'typebox';
import { findAccount } from '../accounts/store.js';
import { v3Auth } from '../auth/authenticate.js';
import { ApiError, type ErrorName } from '../errors.js';
import { requestAmount } from '../http/amounts.js';
import type { RouteDeps } from '../http/deps.js';
import { errorResponses, V3AuthHeaders, v3Security } from '../http/schemas.js';
import type { App } from '../http/typed.js';
import { isPublicSegment } from './format.js';
import { CODE_STATUSES, type CodeStatus } from './rules.js';
import type { CodeError, CodeFailure, TransferCodes } from './service.js';
import { findCodeById, findCodeByPublicSegment, type ListOrder, listCodes } from './store.js';
import { codeObject } from './view.js';

const CodeObjectSchema = Type.Object(
  {
    id: Type.Integer({ description: 'internal id (0 in the public check)' }),
    sn: Type.String({ description: 'id to quote to support (empty in the public check)' }),
    code: Type.String({ description: 'the secret code (only the public segment in the public check)' }),
    recipient: Type.String({ description: 'svcid allowed to redeem, or all (empty in the public check)' }),
    amount: Type.String(),
    currency: Type.String({ description: 'lower case' }),
    status: Type.String({ description: CODE_STATUSES.join(', ') }),
    non_refundable_before: Type.String({ description: 'ISO 8601; the owner may redeem from then on' }),
    created_at: Type.String(),
    redeemed_at: Type.Union([Type.String(), Type.Null()]),
    comment: Type.String({ description: 'public note (empty in the public check)' }),
    private_comment: Type.String({ description: 'owner only (empty for anyone else)' }),
  },
  { description: 'transfer code' },
);

const StatusName = Type.Union(CODE_STATUSES.map((status) => Type.Literal(status)));
const Page = Type.Integer({ minimum: 1, maximum: 2_147_483_647 });

/** Largest page of a list (the spec gives no maximum); larger `per_page` values are clamped. */
export const MAX_PER_PAGE = 100;

function listBody(defaultOrder: ListOrder, withStatus: boolean) {
  return Type.Object({
    page: Type.Optional(Page),
    per_page: Type.Optional(Page),
    order_by: Type.Optional(
      Type.Union(
        (['created_at', 'redeemed_at', 'amount'] as const).map((order) => Type.Literal(order)),
        { description: `default ${defaultOrder}` },
      ),
    ),
    order_dir: Type.Optional(
      Type.Union([Type.Literal('asc'), Type.Literal('desc')], { description: 'default desc' }),
    ),
    ...(withStatus
      ? { status: Type.Optional(Type.Union([Type.Array(StatusName), StatusName], { description: 'any of' })) }
      : {}),
  });
}

const ERROR_OF: Record<CodeError, ErrorName> = {
  invalid: 'svc_code_invalid',
  not_found: 'svc_code_not_found',
  currency_mismatch: 'svc_code_currency_mismatch',
  already_redeemed: 'svc_code_already_redeemed',
  canceled: 'svc_code_canceled',
  on_hold: 'svc_code_on_hold',
  unconfirmed: 'svc_code_unconfirmed',
  not_refundable_yet: 'svc_code_not_refundable_yet',
  wrong_recipient: 'svc_code_wrong_recipient',
  unknown_recipient: 'svc_code_unknown_recipient',
  too_many_failures: 'svc_code_too_many_failures',
  insufficient_funds: 'insufficient_funds',
  mail_failed: 'unavailable',
  // Operator actions only (never answered over HTTP).
  state: 'svc_code_not_found',
};

/** A refusal of the domain as the API error (with `retry-after` in seconds for 429). */
function refuse(reply: { header(name: string, value: string): unknown }, failure: CodeFailure): never {
  if (failure.retryAfterMs !== undefined) {
    reply.header('retry-after', String(Math.max(1, Math.ceil(failure.retryAfterMs / 1000))));
  }
  throw new ApiError(ERROR_OF[failure.error], failure.detail);
}

const ISO_8601 = /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/i;

function parseTime(text: string, field: string): number {
  const ms = ISO_8601.test(text.trim()) ? Date.parse(text.trim()) : Number.NaN;
  if (!Number.isFinite(ms)) throw new ApiError('validation_failed', `${field} must be an ISO 8601 time`);
  return ms;
}

/**
 * Transfer code methods of the spec. Scopes: reading (details, lists) needs `read`; creating and
 * redeeming move money and need `withdraw`. The public check needs nothing.
 */
export function transferCodeRoutes(app: App, deps: RouteDeps, codes: TransferCodes): void {
  const signed = (scope: 'read' | 'withdraw', summary: string) => ({
    preValidation: v3Auth(deps.auth, scope),
    tags: ['v3 transfer codes'],
    summary,
    security: v3Security,
    headers: V3AuthHeaders,
  });
  const view = (code: Parameters<typeof codeObject>[0], viewer: Parameters<typeof codeObject>[1]) =>
    codeObject(code, viewer, deps.auth.secretBox, deps.reference);

  {
    const { preValidation, ...doc } = signed('withdraw', 'Create a transfer code (amount into escrow)');
    app.post(
      '/v3/auth/svc_codes',
      {
        preValidation,
        schema: {
          ...doc,
          body: Type.Object({
            amount: Type.Union([Type.Number(), Type.String()], { description: 'e.g. 0.01 or "0.01"' }),
            currency: Type.String({ minLength: 1, maxLength: 16, description: 'any case, e.g. btc' }),
            recipient: Type.Optional(Type.String({ maxLength: 64, description: 'svcid; default all' })),
            non_refundable_before: Type.Optional(Type.Union([Type.String(), Type.Null()])),
            comment: Type.Optional(Type.String({ maxLength: 1000 })),
            private_comment: Type.Optional(Type.String({ maxLength: 1000 })),
          }),
          response: { 200: CodeObjectSchema, ...errorResponses },
        },
      },
      async (request, reply) => {
        const body = request.body;
        // A code is a withdrawal to whoever redeems it: an account whose withdrawals are limited to
        // its address book cannot send one (a stolen withdraw key would drain it that way).
        if ((await findAccount(deps.db, request.auth!.accountId))?.withdrawAllowlistOnly) {
          throw new ApiError(
            'address_not_allowlisted',
            'this account withdraws only to its address book (withdraw_allowlist_only): transfer codes cannot be created',
          );
        }
        const currency = body.currency.trim().toLowerCase();
        const amount = requestAmount(deps.reference, currency, body.amount);
        if (amount <= 0n) throw new ApiError('validation_failed', 'amount must be positive');
        const recipient = body.recipient?.trim() || 'all';
        const outcome = await codes.create(request.auth!.accountId, {
          amount,
          currency,
          recipient,
          ...(body.non_refundable_before
            ? { nonRefundableBefore: parseTime(body.non_refundable_before, 'non_refundable_before') }
            : {}),
          comment: body.comment ?? '',
          privateComment: body.private_comment ?? '',
        });
        if (!outcome.ok) refuse(reply, outcome);
        return view(outcome.code, 'owner');
      },
    );
  }

  {
    const { preValidation, ...doc } = signed('withdraw', 'Redeem a transfer code');
    app.put(
      '/v3/auth/svc_codes/redeem',
      {
        preValidation,
        schema: {
          ...doc,
          body: Type.Object({ code: Type.String({ maxLength: 200, description: 'the full code' }) }),
          response: { 200: CodeObjectSchema, ...errorResponses },
        },
      },
      async (request, reply) => {
        const outcome = await codes.redeem(request.auth!.accountId, request.ip, request.body.code);
        if (!outcome.ok) refuse(reply, outcome);
        const viewer = outcome.code.ownerId === request.auth!.accountId ? 'owner' : 'redeemer';
        return view(outcome.code, viewer);
      },
    );
  }

  {
    const { preValidation, ...doc } = signed('read', 'One transfer code issued by the caller');
    app.post(
      '/v3/auth/svc_codes/details',
      {
        preValidation,
        schema: {
          ...doc,
          body: Type.Object({
            id: Type.Union([Type.Integer({ minimum: 1 }), Type.String({ pattern: '^[0-9]{1,10}$' })]),
          }),
          response: { 200: CodeObjectSchema, ...errorResponses },
        },
      },
      async (request) => {
        const id = Number(request.body.id);
        const code = id <= 2_147_483_647 ? await findCodeById(deps.db, id) : undefined;
        // Another account's code answers exactly like a missing one.
        if (!code || code.ownerId !== request.auth!.accountId) {
          throw new ApiError('svc_code_not_found', `no transfer code ${id} issued by this account`);
        }
        return view(code, 'owner');
      },
    );
  }

  for (const [path, by, defaultOrder] of [
    ['/v3/auth/svc_codes/issued-by-me', 'owner_id', 'created_at'],
    ['/v3/auth/svc_codes/redeemed-by-me', 'redeemer_id', 'redeemed_at'],
  ] as const) {
    const issued = by === 'owner_id';
    const { preValidation, ...doc } = signed(
      'read',
      issued ? 'Transfer codes issued by the caller' : 'Transfer codes redeemed by the caller',
    );
    app.post(
      path,
      {
        preValidation,
        schema: {
          ...doc,
          body: listBody(defaultOrder, issued),
          response: { 200: Type.Array(CodeObjectSchema), ...errorResponses },
        },
      },
      async (request) => {
        const body = request.body as {
          page?: number;
          per_page?: number;
          order_by?: ListOrder;
          order_dir?: 'asc' | 'desc';
          status?: CodeStatus | CodeStatus[];
        };
        // The spec: the status filter is not available on redeemed-by-me; there it is ignored.
        const statuses = !issued || body.status === undefined ? [] : [body.status].flat();
        const accountId = request.auth!.accountId;
        const rows = await listCodes(deps.db, by, accountId, {
          page: body.page ?? 1,
          perPage: Math.min(body.per_page ?? 10, MAX_PER_PAGE),
          orderBy: body.order_by ?? defaultOrder,
          orderDir: body.order_dir ?? 'desc',
          statuses,
        });
        return rows.map((code) => view(code, code.ownerId === accountId ? 'owner' : 'redeemer'));
      },
    );
  }

  app.get(
    '/v3/svc_codes/:code/check',
    {
      schema: {
        tags: ['v3 transfer codes'],
        summary: 'Public check of a transfer code by its first segment: currency, amount, whether used',
        params: Type.Object({ code: Type.String({ description: 'the first 5 characters of the code' }) }),
        response: { 200: CodeObjectSchema, ...errorResponses },
      },
      // A user may paste a whole code into this path: the request log line shows `:code` as [REDACTED].
    },
    async (request) => {
      const segment = request.params.code;
      if (!isPublicSegment(segment)) {
        throw new ApiError(
          'svc_code_invalid',
          'give the first segment of the code: 5 characters of its alphabet',
        );
      }
      const code = await findCodeByPublicSegment(deps.db, segment);
      if (!code) throw new ApiError('svc_code_not_found', 'no transfer code starts with this segment');
      return view(code, 'public');
    },
  );
}
