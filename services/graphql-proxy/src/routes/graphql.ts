import type { FastifyInstance } from 'fastify';
import type { GraphQLHandler } from '../proxy/graphql-handler.js';

/** POST /graphql: always HTTP 200 with a GraphQL body; caching headers set by the handler. */
export function graphqlRoutes(app: FastifyInstance, handler: GraphQLHandler): void {
  app.post('/graphql', async (request, reply) => {
    const authorization = request.headers.authorization;
    const idempotencyKey = request.headers['idempotency-key'];
    const answer = await handler.handle({
      body: request.body,
      authorization,
      idempotencyKey: typeof idempotencyKey === 'string' ? idempotencyKey : undefined,
    });
    reply.headers(answer.headers).type('application/json; charset=utf-8');
    return reply.send(answer.body);
  });
}
