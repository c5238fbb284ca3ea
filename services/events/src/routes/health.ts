import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { ApiError } from '../errors.js';
import type { EventStore } from '../storage/event-store.js';

/** `GET /health`: 200 when the database answers, 503 (error body) otherwise; the root launcher polls it. */
export const healthRoutes: FastifyPluginAsyncTypebox<{ store: EventStore; storage: string }> = async (
  app,
  options,
) => {
  app.get(
    '/health',
    {
      schema: {
        summary: 'Liveness and database reachability',
        response: {
          200: Type.Object({ status: Type.Literal('ok'), storage: Type.String() }),
        },
      },
    },
    async () => {
      try {
        await options.store.ping();
      } catch {
        throw new ApiError('SERVICE_UNAVAILABLE', 'The database is not reachable');
      }
      return { status: 'ok' as const, storage: options.storage };
    },
  );
};
