import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';

/** What the health route asks of the storage: one statement, and which kind it is. */
export interface CheckedStorage {
  readonly kind: string;
  query(text: string): Promise<unknown>;
}

/** `GET /health`, liveness and readiness: 200 when the database answers, 503 otherwise. */
export function databaseHealthRoute(app: FastifyInstance, db: CheckedStorage): void {
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
        await db.query('SELECT 1');
        return { status: 'ok' as const, storage: db.kind };
      } catch {
        return reply.status(503).send({ status: 'unavailable' as const, storage: db.kind });
      }
    },
  );
}
