import { setTimeout as sleep } from 'node:timers/promises';
import { useRedis } from '@platform/testkit/fixtures';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { RedisQueue } from '../src/queue/redis-queue.js';

// Two instances' views of one fleet queue (each its own connection), as two proxies have.
const redis = useRedis();
const clients: Redis[] = [];
afterAll(() => {
  for (const client of clients) client.disconnect();
});

let fleets = 0;
async function pair(): Promise<[RedisQueue, RedisQueue]> {
  fleets += 1;
  const open = async (name: string) => {
    const client = new Redis(redis.url, { lazyConnect: true });
    await client.connect();
    clients.push(client);
    return new RedisQueue(client, `queue-${process.pid}-${fleets}`, name, 100);
  };
  return [await open('a'), await open('b')];
}

const payload = (n: number) => ({ query: `mutation { m${n} }`, variables: { n }, operationName: null });

describe('RedisQueue', () => {
  it('keeps one acceptance order for mutations appended by different instances', async () => {
    const [a, b] = await pair();
    const ids: string[] = [];
    for (let n = 0; n < 6; n += 1) {
      const result = await (n % 2 === 0 ? a : b).append(payload(n), `key-${n}`, undefined, 1000 + n, 100);
      if (result.kind !== 'queued') throw new Error(result.kind);
      ids.push(result.item.id);
    }
    expect((await b.list()).map((item) => item.id)).toEqual(ids);
    expect((await a.list()).map((item) => item.seq)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(await a.find(ids[3] as string)).toMatchObject({ position: 3 });
    expect(await b.size()).toBe(6);
    const summary = await b.summary();
    expect([summary.size, summary.head?.id]).toEqual([6, ids[0]]);
    expect((await a.append(payload(9), 'k', undefined, 1, 6)).kind).toBe('full');
  });

  it('lets one instance replay at a time; a replayer whose lease expired can neither send nor record', async () => {
    const [a, b] = await pair();
    await a.append(payload(1), 'key-1', undefined, 0, 100);
    await a.append(payload(2), 'key-2', undefined, 0, 100);
    const leaseA = await a.acquireLease(300);
    expect(leaseA).toMatch(/^a\|\d+$/);
    expect(await b.acquireLease(300)).toBeUndefined();
    const step = await a.begin(leaseA as string, false, 10);
    if (step.kind !== 'send') throw new Error(step.kind);
    expect(step.item.idempotencyKey).toBe('key-1');
    expect(step.previousSend).toBeUndefined();
    await sleep(600); // a stalls past its lease (a long GC pause, SIGSTOP...)
    const leaseB = await b.acquireLease(5000);
    expect(Number(leaseB?.split('|')[1])).toBeGreaterThan(Number(leaseA?.split('|')[1]));
    expect(
      await a.finish(leaseA as string, step, {
        kind: 'sent',
        outcome: { id: step.item.id, status: 'sent', at: '', createdAt: '', attempts: 1 },
      }),
    ).toBe('fenced');
    expect((await a.begin(leaseA as string, true, 10)).kind).toBe('fenced');
    // b finds a's send recorded, not its outcome: the mutation is in doubt (b asks the upstream
    // about its key before sending it; proxy/replay-step.ts).
    const again = await b.begin(leaseB as string, false, 10);
    if (again.kind !== 'send') throw new Error(again.kind);
    expect(again.item.idempotencyKey).toBe('key-1');
    expect(again.previousSend).toMatch(new RegExp(`^${leaseA}\\|`));
    expect((await b.sendLog()).map((line) => line.split('|')[1])).toEqual(['a', 'b']);
    const outcome = { id: again.item.id, status: 'sent' as const, at: 'x', createdAt: 'y', attempts: 1 };
    expect(await b.finish(leaseB as string, again, { kind: 'sent', outcome })).toBe('ok');
    expect(await a.outcome(again.item.id)).toEqual(outcome);
    expect((await a.head())?.idempotencyKey).toBe('key-2');
  });

  it('blocks new mutations behind a rejected head; any instance retries or discards it', async () => {
    const [a, b] = await pair();
    const first = await a.append(payload(1), 'key-1', undefined, 0, 100);
    if (first.kind !== 'queued') throw new Error(first.kind);
    const lease = (await a.acquireLease(5000)) as string;
    const step = await a.begin(lease, false, 10);
    if (step.kind !== 'send') throw new Error(step.kind);
    const rejected = {
      ...step.item,
      status: 'rejected' as const,
      attempts: 1,
      lastError: { message: 'no', at: 'x' },
    };
    expect(await a.finish(lease, step, { kind: 'update', item: rejected, event: 'rejected' })).toBe('ok');
    await a.releaseLease(lease);
    const refused = await b.append(payload(2), 'key-2', undefined, 0, 100);
    expect(refused).toMatchObject({ kind: 'blocked', by: { id: first.item.id }, size: 1 });
    expect((await b.blockedBy())?.id).toBe(first.item.id);
    expect(await b.retry('unknown', 0)).toBe('not-found');
    expect(await b.retry(first.item.id, 0)).toBe('retried');
    expect(await a.retry(first.item.id, 0)).toBe('not-rejected');
    expect((await a.head())?.status).toBe('pending');
    expect((await b.discard(first.item.id, 0))?.id).toBe(first.item.id);
    expect(await a.outcome(first.item.id)).toMatchObject({ status: 'discarded' });
    expect(await a.size()).toBe(0);
  });
});
