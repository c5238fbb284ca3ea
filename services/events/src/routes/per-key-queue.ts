/**
 * Runs tasks one at a time per key, in arrival order; tasks of different keys run concurrently.
 *
 * Writers of one event in this process queue here instead of racing each other's compare-and-set,
 * so the retry budget of a write is only spent on writers in other processes. A burst of N writers
 * to one id would otherwise need up to N attempts each: every lost race is one other writer's win.
 */
export interface PerKeyQueue {
  run<T>(key: string, task: () => Promise<T>): Promise<T>;
  /** Keys with a task running or waiting (for tests: the map must not grow without bound). */
  readonly size: number;
}

export function createPerKeyQueue(): PerKeyQueue {
  // The tail of each key's chain: settles when the last queued task has settled.
  const tails = new Map<string, Promise<void>>();
  return {
    run<T>(key: string, task: () => Promise<T>): Promise<T> {
      const previous = tails.get(key) ?? Promise.resolve();
      const result = previous.then(task);
      // The next task waits for this one whatever its outcome; its failure belongs to its caller.
      const tail = result.then(
        () => undefined,
        () => undefined,
      );
      tails.set(key, tail);
      void tail.then(() => {
        if (tails.get(key) === tail) tails.delete(key);
      });
      return result;
    },
    get size() {
      return tails.size;
    },
  };
}
