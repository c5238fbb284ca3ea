import { describe, expect, it } from 'vitest';
import { type QueueEvent, QueueEventHub } from '../src/queue/events.js';
import { MutationQueue } from '../src/queue/mutation-queue.js';
import { MemoryOutcomeLog } from '../src/queue/outcomes.js';
import { MemoryQueueStore } from '../src/queue/store.js';

describe('QueueEventHub on one instance (QUEUE_STORE=file)', () => {
  it('announces queued, rejected (once), then sent and discarded outcomes', async () => {
    const queue = await MutationQueue.open(new MemoryQueueStore());
    const hub = new QueueEventHub();
    const outcomes = hub.followLocal(queue, new MemoryOutcomeLog());
    const heard: QueueEvent[] = [];
    const unsubscribe = hub.subscribe((event) => heard.push(event));
    const payload = { query: 'mutation { a }', variables: null, operationName: null };
    const first = await queue.append(payload, 'k1', undefined, 0);
    const second = await queue.append(payload, 'k2', undefined, 0);
    await queue.markRejected(first, { message: 'bad input', at: 'x' });
    await queue.markRetry(first, { message: 'again', at: 'x' }, 0); // not a new rejection
    await queue.retry(first, 0);
    await queue.remove(first);
    await outcomes.record({
      id: first.id,
      status: 'sent',
      at: 'x',
      createdAt: 'y',
      attempts: 2,
      upstreamStatus: 200,
    });
    await queue.remove(second);
    await outcomes.record({ id: second.id, status: 'discarded', at: 'x', createdAt: 'y', attempts: 0 });
    unsubscribe();
    await queue.append(payload, 'k3', undefined, 0);
    expect(heard.map((event) => [event.event, event.id])).toEqual([
      ['queued', first.id],
      ['queued', second.id],
      ['rejected', first.id],
      ['sent', first.id],
      ['discarded', second.id],
    ]);
    expect(heard[2]?.message).toBe('bad input');
    expect(heard[3]?.upstreamStatus).toBe(200);
  });
});
