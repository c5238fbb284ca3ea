import { afterAll, beforeAll } from 'vitest';
import { type MemcachedServer, startMemcached } from './memcached.js';
import { createTestDatabase, type TestDatabase } from './postgres.js';
import { type RedisServer, type StartRedisOptions, startRedis } from './redis.js';

/**
 * Vitest fixtures: each registers beforeAll/afterAll in the calling test file and returns a handle
 * whose properties are readable once the file's tests run. Cleanup runs even when tests fail.
 */
function lazy<T extends object>(name: string, read: () => T | undefined): T {
  return new Proxy({} as T, {
    get(_target, property) {
      const value = read();
      if (value === undefined) throw new Error(`${name} is not started yet: use it inside a test or a hook`);
      const member = Reflect.get(value, property, value) as unknown;
      return typeof member === 'function' ? member.bind(value) : member;
    },
  });
}

/** A throw-away PostgreSQL database for this test file. */
export function useTestDatabase(prefix?: string): TestDatabase {
  let db: TestDatabase | undefined;
  beforeAll(async () => {
    db = await createTestDatabase(prefix);
  });
  afterAll(async () => {
    await db?.drop();
  });
  return lazy('test database', () => db);
}

/** A Redis server for this test file (REDIS_URL or a throw-away one). */
export function useRedis(options?: StartRedisOptions): RedisServer {
  let server: RedisServer | undefined;
  beforeAll(async () => {
    server = await startRedis(options);
  });
  afterAll(async () => {
    await server?.stop();
  });
  return lazy('redis', () => server);
}

/** A memcached server for this test file (MEMCACHED_URL or a throw-away one). */
export function useMemcached(options?: { fresh?: boolean }): MemcachedServer {
  let server: MemcachedServer | undefined;
  beforeAll(async () => {
    server = await startMemcached(options);
  });
  afterAll(async () => {
    await server?.stop();
  });
  return lazy('memcached', () => server);
}
