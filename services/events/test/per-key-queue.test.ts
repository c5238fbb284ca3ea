/** Unit tests of the per-key write queue: one task at a time per key, in order, failures contained. */
import { describe, expect, it } from 'vitest';
import { createPerKeyQueue } from '../src/routes/per-key-queue.js';

const tick = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('PerKeyQueue', () => {
  it('runs tasks of one key one at a time, in arrival order', async () => {
    const queue = createPerKeyQueue();
    const log: string[] = [];
    let running = 0;
    let most = 0;
    const task = (name: string) => async () => {
      running += 1;
      most = Math.max(most, running);
      log.push(`start ${name}`);
      await tick();
      log.push(`end ${name}`);
      running -= 1;
      return name;
    };
    const results = await Promise.all(['a', 'b', 'c'].map((name) => queue.run('k', task(name))));
    expect(results).toEqual(['a', 'b', 'c']);
    expect(most).toBe(1);
    expect(log).toEqual(['start a', 'end a', 'start b', 'end b', 'start c', 'end c']);
  });

  it('runs tasks of different keys concurrently', async () => {
    const queue = createPerKeyQueue();
    let running = 0;
    let most = 0;
    const task = async () => {
      running += 1;
      most = Math.max(most, running);
      await tick();
      running -= 1;
    };
    await Promise.all([queue.run('x', task), queue.run('y', task), queue.run('z', task)]);
    expect(most).toBe(3);
  });

  it('a failed task fails only its caller; the next one still runs; idle keys are forgotten', async () => {
    const queue = createPerKeyQueue();
    const failed = queue.run('k', async () => {
      throw new Error('boom');
    });
    const next = queue.run('k', async () => 'after');
    await expect(failed).rejects.toThrow('boom');
    await expect(next).resolves.toBe('after');
    await tick();
    expect(queue.size).toBe(0);
  });
});
