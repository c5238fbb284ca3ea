import { readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { MutationQueue } from '../src/queue/mutation-queue.js';
import { FileQueueStore, MemoryQueueStore, type QueueStore } from '../src/queue/store.js';
import { tempDir } from './support/processes.js';

const dirs: Array<{ remove(): Promise<void> }> = [];
afterAll(async () => {
  for (const dir of dirs) await dir.remove();
});

const payload = (title: string) => ({
  query: 'mutation ($t: String) { createPost(input: { title: $t }) { post { id } } }',
  variables: { t: title },
  operationName: null,
});

// One contract, run against every QueueStore implementation; "reopen" simulates a restart.
const implementations: Array<
  [string, () => Promise<{ store: QueueStore; reopen: () => Promise<QueueStore> }>]
> = [
  [
    'memory',
    async () => {
      const store = new MemoryQueueStore();
      return { store, reopen: async () => store };
    },
  ],
  [
    'file',
    async () => {
      const dir = await tempDir('queue-store');
      dirs.push(dir);
      return { store: await FileQueueStore.open(dir.path), reopen: () => FileQueueStore.open(dir.path) };
    },
  ],
];

describe.each(implementations)('QueueStore contract: %s', (_name, open) => {
  it('keeps FIFO order, state changes and removals across a reopen', async () => {
    const { store, reopen } = await open();
    const queue = await MutationQueue.open(store);
    const a = await queue.append(payload('a'), 'key-a', undefined, 1000);
    const b = await queue.append(payload('b'), 'key-b', 'Bearer client', 1001);
    const c = await queue.append(payload('c'), 'key-c', undefined, 1002);
    await queue.markRetry(a, { message: 'down', at: 'x' }, 5000);
    await queue.markRejected(b, { message: 'bad', code: 'BAD_USER_INPUT', at: 'y' });
    await queue.remove(c);

    const again = await MutationQueue.open(await reopen());
    expect(again.list().map((item) => item.id)).toEqual([a.id, b.id]);
    expect(again.head()).toMatchObject({
      attempts: 1,
      nextAttemptAt: 5000,
      idempotencyKey: 'key-a',
      status: 'pending',
    });
    expect(again.find(b.id)).toMatchObject({
      status: 'rejected',
      authorization: 'Bearer client',
      lastError: { code: 'BAD_USER_INPUT' },
    });
    const d = await again.append(payload('d'), 'key-d', undefined, 1003);
    expect(d.seq).toBeGreaterThan(b.seq);
    await again.retry(again.find(b.id)!, 2000);
    expect(again.find(b.id)?.status).toBe('pending');
  });
});

describe('FileQueueStore files', () => {
  it('sets a corrupt record aside instead of replaying or crashing', async () => {
    const dir = await tempDir('queue-files');
    dirs.push(dir);
    const corrupt: string[] = [];
    const store = await FileQueueStore.open(dir.path, (file) => corrupt.push(file));
    const queue = await MutationQueue.open(store);
    await queue.append(payload('kept'), 'k', undefined, 1);
    await writeFile(path.join(dir.path, '000000000002-broken.json'), '{"id":');
    const reopened = await MutationQueue.open(
      await FileQueueStore.open(dir.path, (file) => corrupt.push(file)),
    );
    expect(reopened.size).toBe(1);
    expect(corrupt).toHaveLength(1);
    expect((await readdir(dir.path)).some((name) => name.endsWith('.corrupt'))).toBe(true);
  });
});
