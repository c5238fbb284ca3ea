import { type RedisServer, startRedis } from '@platform/testkit/redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBackend } from '../../src/backends/create.js';
import { waitForRedis } from '../../src/backends/startup.js';
import { parseSettings } from '../../src/config.js';

/** REDIS_STARTUP_* (the reference's start-up retries): wait with backoff, or fail after the max elapsed time. */
describe('start-up retries to Redis', () => {
  let redis: RedisServer;
  beforeAll(async () => {
    redis = await startRedis({ fresh: true });
    await redis.stop();
  });
  afterAll(async () => {
    await redis.stop();
  });

  function settingsFor(extra: Record<string, string>) {
    return parseSettings({
      REDIS_SOCKET_TYPE: 'tcp',
      REDIS_URL: `127.0.0.1:${redis.port}`,
      REDIS_POOL_SIZE: '1',
      REDIS_TIMEOUT: '200ms',
      REDIS_STARTUP_INITIAL_INTERVAL: '100ms',
      REDIS_STARTUP_MAX_INTERVAL: '200ms',
      ...extra,
    }).backend;
  }

  it('fails the start with the reference message once REDIS_STARTUP_MAX_ELAPSED_TIME has passed', async () => {
    const settings = settingsFor({ REDIS_STARTUP_MAX_ELAPSED_TIME: '600ms' });
    const backend = createBackend(settings);
    const warnings: unknown[] = [];
    try {
      await expect(
        waitForRedis(backend, settings.startup, { warn: (...args: unknown[]) => warnings.push(args) }),
      ).rejects.toThrow(
        /^timed out waiting for Redis connection to redis single 127\.0\.0\.1:\d+ \(pool 1\) after /,
      );
      expect(warnings.length).toBeGreaterThan(0);
    } finally {
      await backend.close();
    }
  });

  it('keeps retrying (no max elapsed time by default) and goes on once Redis is up', async () => {
    const settings = settingsFor({});
    expect(settings.startup.maxElapsedMs).toBe(0);
    const backend = createBackend(settings);
    try {
      // Still waiting after three failed attempts (each one logs its retry): the observable signal
      // that it keeps trying, instead of a sleep during which nothing should happen.
      let done = false;
      const retries: string[] = [];
      let thirdRetry = (): void => undefined;
      const retried = new Promise<void>((resolve) => {
        thirdRetry = resolve;
      });
      const warn = (...args: unknown[]): void => {
        retries.push(String(args[1]));
        if (retries.length === 3) thirdRetry();
      };
      const waiting = waitForRedis(backend, settings.startup, { warn }).then(() => {
        done = true;
      });
      await Promise.race([retried, waiting]);
      expect(done).toBe(false);
      expect(retries).toEqual(Array(3).fill('Retrying Redis connection'));
      await redis.restart();
      await waiting;
      expect(
        await backend.increment([
          { key: `startup-${process.pid}`, hits: 1, ttlSeconds: 60, perSecond: false },
        ]),
      ).toEqual([1]);
    } finally {
      await backend.close();
    }
  });
});
