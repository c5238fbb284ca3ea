import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { HttpError } from '../errors.js';
import type { Replayer } from '../proxy/replayer.js';
import type { MutationQueue } from '../queue/mutation-queue.js';
import type { QueuedMutation } from '../queue/store.js';

const IdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 100 }) });

function view(item: QueuedMutation) {
  return {
    id: item.id,
    createdAt: item.createdAt,
    payload: {
      query: item.payload.query,
      variables: item.payload.variables,
      operationName: item.payload.operationName,
    },
    status: item.status,
    attempts: item.attempts,
    lastError: item.lastError ?? null,
    nextAttemptAt: new Date(item.nextAttemptAt).toISOString(),
  };
}

/**
 * The queue's management API: list (`GET /queue`), replay now (`POST /flush`), and for a mutation the
 * upstream rejected: retry it (`POST /queue/:id/retry`) or discard it (`DELETE /queue/:id`).
 */
export function queueRoutes(
  app: FastifyInstance,
  deps: { queue: MutationQueue; replayer: Replayer; clock: () => number },
): void {
  const { queue, replayer, clock } = deps;
  const typed = app.withTypeProvider<TypeBoxTypeProvider>();

  app.get('/queue', async () => ({ mutations: queue.list().map(view) }));

  app.post('/flush', async () => {
    const result = await replayer.replay(true);
    return {
      flushed: result.flushed,
      remaining: result.remaining,
      ...(result.stoppedBy ? { stoppedBy: result.stoppedBy } : {}),
    };
  });

  typed.post('/queue/:id/retry', { schema: { params: IdParams } }, async (request) => {
    const item = queue.find(request.params.id);
    if (!item) throw new HttpError('NOT_FOUND', 'No queued mutation has this id');
    if (item.status !== 'rejected')
      throw new HttpError('CONFLICT', 'Only a rejected mutation can be retried');
    await queue.retry(item, clock());
    const result = await replayer.replay(true);
    return { retried: item.id, flushed: result.flushed, remaining: result.remaining };
  });

  typed.delete('/queue/:id', { schema: { params: IdParams } }, async (request) => {
    const item = queue.find(request.params.id);
    if (!item) throw new HttpError('NOT_FOUND', 'No queued mutation has this id');
    await queue.remove(item);
    void replayer.replay(true);
    return { discarded: view(item) };
  });
}
