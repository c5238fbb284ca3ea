import { Type } from 'typebox';
import type { RouteDeps } from '../http/deps.js';
import type { App } from '../http/typed.js';

/** Liveness and readiness: 200 when the database answers, 503 otherwise. */
export function healthRoutes(app: App, deps: RouteDeps): void {
  app.get(
    '/health',
    {
      schema: {
        tags: ['service'],
        summary: 'Health check',
        response: {
          200: Type.Object({ status: Type.Literal('ok'), storage: Type.String() }),
          503: Type.Object({ status: Type.Literal('unavailable'), storage: Type.String() }),
        },
      },
    },
    async (_request, reply) => {
      try {
        await deps.db.query('SELECT 1');
        return { status: 'ok' as const, storage: deps.db.kind };
      } catch {
        return reply.status(503).send({ status: 'unavailable' as const, storage: deps.db.kind });
      }
    },
  );
}
