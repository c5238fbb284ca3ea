import type { Logger } from 'pino';
import type { StartupRetrySettings } from '../settings/backend.js';
import type { CounterBackend } from './types.js';

/**
 * The start waits for Redis as the reference does (REDIS_STARTUP_* settings): retries with an
 * exponential backoff (factor 2, jittered, from the initial to the max interval), forever when the
 * max elapsed time is 0, else failing the start with the reference's message once it has passed.
 */
export async function waitForRedis(
  backend: CounterBackend,
  retry: StartupRetrySettings,
  logger: Pick<Logger, 'warn'>,
  now: () => number = Date.now,
): Promise<void> {
  const started = now();
  let interval = Math.max(1, retry.initialIntervalMs);
  while (!(await backend.ready())) {
    const elapsed = now() - started;
    if (retry.maxElapsedMs > 0 && elapsed >= retry.maxElapsedMs) {
      throw new Error(
        `timed out waiting for Redis connection to ${backend.description} after ${formatMs(elapsed)}`,
      );
    }
    // Jitter as the reference's backoff: a random point between the previous and the current interval.
    const wait = Math.min(retry.maxIntervalMs, interval / 2 + Math.random() * (interval / 2));
    logger.warn(
      { backend: backend.description, retryInMs: Math.round(wait), elapsedMs: elapsed },
      'Retrying Redis connection',
    );
    await new Promise((resolve) => setTimeout(resolve, wait));
    interval = Math.min(retry.maxIntervalMs, interval * 2);
  }
}

function formatMs(ms: number): string {
  return ms >= 1000 ? `${(ms / 1000).toFixed(3).replace(/\.?0+$/, '')}s` : `${Math.round(ms)}ms`;
}
