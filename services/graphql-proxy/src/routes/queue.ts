import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { HttpError } from '../errors.js';
import type { ReplayResult } from '../proxy/replayer.js';
import type { QueueAccess } from '../queue/access.js';
import type { QueuedMutation } from '../queue/store.js';

/** Starts a replay now (this instance's replayer; in a fleet, the one holding the replay lease). */
export interface ReplayControl {
  replay(force: boolean): Promise<ReplayResult>;
}

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
 * The queue's management API: list (`GET /queue`), one mutation and its outcome (`GET /queue/:id`),
 * replay now (`POST /flush`), and for a mutation the upstream rejected: retry it
 * (`POST /queue/:id/retry`) or discard it (`DELETE /queue/:id`).
 */
export function queueRoutes(
  app: FastifyInstance,
  deps: { queue: QueueAccess; replayer: ReplayControl; clock: () => number },
): void {
  const { queue, replayer, clock } = deps;
  const typed = app.withTypeProvider<TypeBoxTypeProvider>();

  app.get('/queue', async () => ({ mutations: (await queue.list()).map(view) }));

  // pending / rejected while queued (a rejected one with the upstream's errors); sent (with the
  // upstream's answer) or discarded once it left the queue.
  typed.get('/queue/:id', { schema: { params: IdParams } }, async (request) => {
    const found = await queue.find(request.params.id);
    if (found) {
      const { item, position } = found;
      return {
        ...view(item),
        position,
        ...(item.status === 'rejected' ? { errors: item.lastError?.errors ?? [] } : {}),
      };
    }
    const outcome = await queue.outcome(request.params.id);
    if (!outcome) throw new HttpError('NOT_FOUND', 'No queued mutation has this id');
    return outcome;
  });

  app.post('/flush', async () => {
    const result = await replayer.replay(true);
    // `failed`: mutations this flush tried and could not send (the replay stops at the first one);
    // `remaining`: still queued.
    const failed =
      result.stoppedBy && result.stoppedBy.reason !== 'backoff' && result.stoppedBy.reason !== 'leased'
        ? 1
        : 0;
    return {
      message: result.stoppedBy
        ? `Flushed ${result.flushed} queued mutation(s); stopped at ${result.stoppedBy.id} (${result.stoppedBy.reason}), ${result.remaining} remaining`
        : `Flushed ${result.flushed} queued mutation(s)`,
      flushed: result.flushed,
      failed,
      remaining: result.remaining,
      ...(result.stoppedBy ? { stoppedBy: result.stoppedBy } : {}),
    };
  });

  typed.post('/queue/:id/retry', { schema: { params: IdParams } }, async (request) => {
    const retried = await queue.retry(request.params.id, clock());
    if (retried === 'not-found') throw new HttpError('NOT_FOUND', 'No queued mutation has this id');
    if (retried === 'not-rejected')
      throw new HttpError('CONFLICT', 'Only a rejected mutation can be retried');
    const result = await replayer.replay(true);
    return { retried: request.params.id, flushed: result.flushed, remaining: result.remaining };
  });

  typed.delete('/queue/:id', { schema: { params: IdParams } }, async (request) => {
    const item = await queue.discard(request.params.id, clock());
    if (!item) throw new HttpError('NOT_FOUND', 'No queued mutation has this id');
    void replayer.replay(true);
    return { discarded: view(item) };
  });
}
