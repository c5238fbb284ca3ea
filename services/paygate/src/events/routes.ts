import { Type } from 'typebox';
import { ApiError } from '../errors.js';
import type { RouteDeps } from '../http/deps.js';
import { merchantAuth } from '../http/merchant-auth.js';
import { errorResponses } from '../http/schemas.js';
import type { App } from '../http/typed.js';
import { assignPositions, eventsAfter } from './store.js';

const Event = Type.Object(
  {
    position: Type.Integer({ description: 'merchant-wide, increasing (numbers may skip)' }),
    event_id: Type.String(),
    object: Type.String(),
    id: Type.String(),
    sequence: Type.Integer({ description: "the event's number among its object's events" }),
    status: Type.String(),
  },
  { additionalProperties: true, description: 'the callback body, plus position' },
);

/**
 * `POST /merchant-api/events` (signed): the merchant's events after the last position it saw, so a
 * receiver that was down catches up without waiting for the retries.
 */
export function eventRoutes(app: App, deps: RouteDeps): void {
  app.post(
    '/merchant-api/events',
    {
      preValidation: merchantAuth(deps),
      schema: {
        tags: ['merchant'],
        summary: 'Events after a position (catch-up)',
        description:
          'Every event the merchant was or will be called back with, each the callback body plus its ' +
          'merchant-wide `position`, in position order. Pass the last position seen as `after` (0 at first).',
        security: [{ paygateMerchant: [], paygateTimestamp: [], paygateSignature: [] }],
        body: Type.Object({
          after: Type.Optional(Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER })),
          limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500 })),
        }),
        response: { 200: Type.Object({ data: Type.Array(Event) }), ...errorResponses },
      },
    },
    async (request) => {
      if (!request.merchant) throw new ApiError('unknown_merchant', 'the request is not signed');
      await assignPositions(deps.db);
      const events = await eventsAfter(
        deps.db,
        request.merchant.id,
        request.body.after ?? 0,
        request.body.limit ?? 100,
      );
      return {
        data: events.map((event) => ({
          ...(JSON.parse(event.body) as Record<string, unknown>),
          position: event.position,
        })),
      };
    },
  );
}
