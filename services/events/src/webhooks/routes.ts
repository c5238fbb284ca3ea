/**
 * `/webhooks`: Standard Webhooks subscriptions of the caller. A subscription receives what its
 * owner may see (`messages.ts`), signed with its `whsec_` secret (shown once, at creation and at
 * each rotation). Another user's subscription is 404, as a missing one.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { type Static, Type } from 'typebox';
import type { TokenVerifier } from '../auth/token-verifier.js';
import { ApiError } from '../errors.js';
import { callerOf, requiredTokenHook } from '../http/authenticate.js';
import { ErrorSchema } from '../routes/event-schemas.js';
import type { SqlClient } from '../storage/sql-client.js';
import { EVENT_TYPES, type MessageType, messageTypeFor, TEST_TYPE } from './messages.js';
import type { WebhookSettings } from './settings.js';
import { createSubscriptionStore, type Subscription } from './subscription-store.js';
import { checkTargetUrl, TARGET_URL_MAX_LENGTH } from './targets.js';

export interface WebhookRoutesOptions {
  sql: SqlClient;
  verifier: TokenVerifier;
  settings: WebhookSettings;
  now: () => Date;
  /** A local write or a test message queued: the sender looks for due messages. */
  wake: () => void;
}

/** Test messages of one subscription waiting to be sent, at most. */
export const MAX_WAITING_TESTS = 5;
/** Changes after a subscription's cursor examined for its pending messages in the deliveries list. */
const PENDING_SCAN = 2_000;

const IdParams = Type.Object({
  id: Type.String({ pattern: '^wh_[A-Za-z0-9_-]{22}$', description: 'The id `POST /webhooks` answered.' }),
});

const EventTypeSchema = Type.Enum([...EVENT_TYPES]);

const CreateBody = Type.Object(
  {
    url: Type.String({
      maxLength: TARGET_URL_MAX_LENGTH,
      description:
        'An absolute http(s) URL; not a private or loopback address unless WEBHOOK_ALLOW_PRIVATE_TARGETS=true.',
      examples: ['https://receiver.example/hooks/events'],
    }),
    types: Type.Optional(
      Type.Array(EventTypeSchema, {
        minItems: 1,
        maxItems: EVENT_TYPES.length,
        uniqueItems: true,
        description: 'The types to receive; all three when omitted.',
      }),
    ),
  },
  { additionalProperties: false },
);

const SubscriptionSchema = Type.Object({
  id: Type.String(),
  url: Type.String(),
  types: Type.Array(EventTypeSchema),
  status: Type.Enum(['active', 'disabled']),
  disabled_reason: Type.Union([Type.String(), Type.Null()]),
  created_at: Type.String({ format: 'date-time' }),
  previous_secret_expires_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
    description: 'Until then the secret before the last rotation signs too.',
  }),
});

const WithSecret = Type.Object({
  ...SubscriptionSchema.properties,
  secret: Type.String({ description: 'The whsec_ secret: shown only in this answer.' }),
});

const DeliverySchema = Type.Object({
  webhook_id: Type.String({ description: 'The `webhook-id` header of every attempt of this message.' }),
  type: Type.Enum([...EVENT_TYPES, TEST_TYPE]),
  attempts: Type.Integer(),
  status: Type.Enum(['pending', 'delivered', 'failed']),
  last_response_status: Type.Union([Type.Integer(), Type.Null()]),
  next_attempt_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  last_error: Type.Optional(Type.String()),
});

const bearer: Record<string, string[]>[] = [{ bearerAuth: [] }];
const common = { 400: ErrorSchema, 401: ErrorSchema, 414: ErrorSchema, 500: ErrorSchema, 503: ErrorSchema };
const NOT_FOUND = 'Webhook subscription not found';

function view(sub: Subscription): Static<typeof SubscriptionSchema> {
  return {
    id: sub.id,
    url: sub.url,
    types: sub.types,
    status: sub.status,
    disabled_reason: sub.disabledReason,
    created_at: sub.createdAt.toISOString(),
    previous_secret_expires_at: sub.previousSecretUntil?.toISOString() ?? null,
  };
}

export const webhookRoutes: FastifyPluginAsyncTypebox<WebhookRoutesOptions> = async (app, options) => {
  const { settings, now } = options;
  const store = createSubscriptionStore(options.sql);
  const requiredToken = requiredTokenHook(options.verifier);
  const found = async (owner: string, id: string) => {
    const sub = await store.get(owner, id);
    if (sub === undefined) throw new ApiError('NOT_FOUND', NOT_FOUND);
    return sub;
  };

  app.post(
    '/webhooks',
    {
      onRequest: requiredToken,
      schema: {
        summary: 'Subscribe a URL to event changes (Standard Webhooks); the secret is in this answer only',
        description: `At most ${settings.perUser} subscriptions per user (WEBHOOKS_PER_USER), then 409.`,
        security: bearer,
        body: CreateBody,
        response: { 201: WithSecret, ...common, 409: ErrorSchema, 413: ErrorSchema, 415: ErrorSchema },
      },
    },
    async (request, reply) => {
      const viewer = callerOf(request);
      const target = checkTargetUrl(request.body.url, settings.allowPrivateTargets);
      if (!target.ok) throw new ApiError('VALIDATION', [target.problem]);
      const created = await store.create(
        viewer.userId,
        viewer.member,
        request.body.url,
        request.body.types ?? EVENT_TYPES,
        now(),
        settings.perUser,
      );
      if (!created.ok) {
        throw new ApiError(
          'CONFLICT',
          `At most ${created.limit} webhook subscriptions per user: delete one first`,
        );
      }
      reply.code(201).header('location', `${request.url.split('?')[0] ?? ''}/${created.subscription.id}`);
      return { ...view(created.subscription), secret: created.secret };
    },
  );

  app.get(
    '/webhooks',
    {
      onRequest: requiredToken,
      schema: {
        summary: "The caller's webhook subscriptions (without secrets)",
        security: bearer,
        response: { 200: Type.Array(SubscriptionSchema), ...common },
      },
    },
    async (request) => (await store.list(callerOf(request).userId)).map(view),
  );

  app.get(
    '/webhooks/:id',
    {
      onRequest: requiredToken,
      schema: {
        summary: 'One webhook subscription of the caller',
        security: bearer,
        params: IdParams,
        response: { 200: SubscriptionSchema, ...common, 404: ErrorSchema },
      },
    },
    async (request) => view(await found(callerOf(request).userId, request.params.id)),
  );

  app.delete(
    '/webhooks/:id',
    {
      onRequest: requiredToken,
      schema: {
        summary: 'Delete a webhook subscription (nothing more is sent to it)',
        security: bearer,
        params: IdParams,
        response: { 204: Type.Null(), ...common, 404: ErrorSchema },
      },
    },
    async (request, reply) => {
      if (!(await store.remove(callerOf(request).userId, request.params.id))) {
        throw new ApiError('NOT_FOUND', NOT_FOUND);
      }
      return reply.code(204).send(null);
    },
  );

  app.post(
    '/webhooks/:id/rotate-secret',
    {
      onRequest: requiredToken,
      schema: {
        summary: 'A new secret (in this answer only); the old one keeps signing during the grace period',
        description: `Both secrets sign, in one webhook-signature header, for WEBHOOK_ROTATION_GRACE_SECONDS (default 24 h). No body.`,
        security: bearer,
        params: IdParams,
        response: { 200: WithSecret, ...common, 404: ErrorSchema, 415: ErrorSchema },
      },
    },
    async (request) => {
      const graceUntil = new Date(now().getTime() + settings.rotationGraceSeconds * 1000);
      const rotated = await store.rotate(callerOf(request).userId, request.params.id, graceUntil);
      if (rotated === undefined) throw new ApiError('NOT_FOUND', NOT_FOUND);
      return { ...view(rotated.subscription), secret: rotated.secret };
    },
  );

  app.post(
    '/webhooks/:id/test',
    {
      onRequest: requiredToken,
      schema: {
        summary: 'Queue a webhook.test message to the subscription, in order with its other messages',
        description: `At most ${MAX_WAITING_TESTS} test messages waiting per subscription, then 409. No body.`,
        security: bearer,
        params: IdParams,
        response: {
          202: Type.Object({ webhook_id: Type.String() }),
          ...common,
          404: ErrorSchema,
          409: ErrorSchema,
          415: ErrorSchema,
        },
      },
    },
    async (request, reply) => {
      const queued = await store.enqueueTest(
        callerOf(request).userId,
        request.params.id,
        now(),
        MAX_WAITING_TESTS,
      );
      if (!queued.ok) {
        if (queued.reason === 'missing') throw new ApiError('NOT_FOUND', NOT_FOUND);
        throw new ApiError(
          'CONFLICT',
          queued.reason === 'disabled'
            ? 'The subscription is disabled (see disabled_reason): create a new one'
            : `At most ${MAX_WAITING_TESTS} test messages may wait to be sent`,
        );
      }
      options.wake();
      return reply.code(202).send({ webhook_id: queued.messageId });
    },
  );

  app.get(
    '/webhooks/:id/deliveries',
    {
      onRequest: requiredToken,
      schema: {
        summary: 'The latest messages of a subscription, newest first: pending, delivered or failed',
        description:
          `Pending: messages not delivered yet (of an active subscription, among the ${PENDING_SCAN} latest changes); ` +
          `the oldest carries the attempts, status and next_attempt_at of the message being tried. ` +
          `Delivered and failed: the last ${settings.historyPerSubscription} (WEBHOOK_HISTORY).`,
        security: bearer,
        params: IdParams,
        querystring: Type.Object({ limit: Type.Integer({ minimum: 1, maximum: 100, default: 50 }) }),
        response: { 200: Type.Array(DeliverySchema), ...common, 404: ErrorSchema },
      },
    },
    async (request) => {
      const sub = await found(callerOf(request).userId, request.params.id);
      const { limit } = request.query;
      const items: Static<typeof DeliverySchema>[] = [];
      if (sub.status === 'active') {
        const recent = await store.recentChanges(sub.cursor, PENDING_SCAN);
        const pending: { messageId: string; type: MessageType }[] = [];
        for (const change of recent) {
          const type = messageTypeFor(change, sub);
          if (type !== null) pending.push({ messageId: change.messageId, type });
        }
        // Newest first: the last one is the first waiting when the scan reached the cursor.
        const complete = recent.length < PENDING_SCAN;
        pending.slice(0, limit).forEach((message, index) => {
          const head = complete && index === pending.length - 1;
          items.push({
            webhook_id: message.messageId,
            type: message.type,
            attempts: head ? sub.attempts : 0,
            status: 'pending',
            last_response_status: head && sub.attempts > 0 ? sub.lastResponseStatus : null,
            next_attempt_at: sub.nextAttemptAt.toISOString(),
            ...(head && sub.attempts > 0 && sub.lastError !== null ? { last_error: sub.lastError } : {}),
          });
        });
      }
      if (items.length < limit) {
        for (const message of await store.finished(sub.id, limit - items.length)) {
          items.push({
            webhook_id: message.messageId,
            type: message.type,
            attempts: message.attempts,
            status: message.status,
            last_response_status: message.lastResponseStatus,
            next_attempt_at: null,
          });
        }
      }
      return items;
    },
  );
};
