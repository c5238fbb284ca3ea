/**
 * Keeps the change log to `SYNC_RETENTION`: every minute (and once at start) each instance deletes
 * the changes older than that, a batch per statement, until none is left. Instances doing it at
 * once only repeat each other's work. Sync tokens older than the pruned part answer 410.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { SqlQueryable } from '../storage/sql-client.js';
import { pruneChanges } from './change-log.js';

export interface Pruner {
  /** One pass now (tests); resolves when it is done. */
  run(): Promise<void>;
  close(): Promise<void>;
}

const EVERY_MS = 60_000;

export function startPruner(
  sql: SqlQueryable,
  options: { retentionSeconds: number; now: () => Date; logger?: FastifyBaseLogger },
): Pruner {
  let running: Promise<void> | undefined;
  let closed = false;
  const pass = async (): Promise<void> => {
    for (;;) {
      if (closed) return;
      const cutoff = new Date(options.now().getTime() - options.retentionSeconds * 1000);
      if ((await pruneChanges(sql, cutoff)) === 0) return;
    }
  };
  const run = (): Promise<void> => {
    running ??= pass()
      .catch((error: unknown) => options.logger?.warn({ err: error }, 'change log pruning failed'))
      .finally(() => {
        running = undefined;
      });
    return running;
  };
  const timer = setInterval(() => void run(), EVERY_MS);
  timer.unref();
  const first = setTimeout(() => void run(), 1_000);
  first.unref();
  return {
    run,
    async close() {
      closed = true;
      clearInterval(timer);
      clearTimeout(first);
      await running;
    },
  };
}
