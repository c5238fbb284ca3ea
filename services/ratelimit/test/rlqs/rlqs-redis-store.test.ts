import { type RedisServer, startRedis } from '@platform/testkit/redis';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisQuotaStore } from '../../src/rlqs/redis-store.js';
import type { QuotaReport } from '../../src/rlqs/store.js';

/** The RLQS state in Redis, called directly: how many script calls the reports cost, and their states. */
async function evalshaCalls(raw: Redis): Promise<number> {
  const m = /cmdstat_evalsha:calls=(\d+)/.exec(await raw.info('commandstats'));
  return m ? Number(m[1]) : 0;
}

describe('RLQS quota state in Redis: script calls', () => {
  let redis: RedisServer;
  let raw: Redis;
  let store: RedisQuotaStore;
  beforeAll(async () => {
    redis = await startRedis({ fresh: true });
    raw = new Redis({ host: redis.host, port: redis.port });
    store = new RedisQuotaStore(
      new Redis({ host: redis.host, port: redis.port, lazyConnect: true, enableAutoPipelining: true }),
      15_000,
      false,
      'test',
    );
  });
  afterAll(async () => {
    await store.close();
    raw.disconnect();
    await redis.stop();
  });

  const entry = (key: string, member: string, allowed: number, leave = false): QuotaReport => ({
    key: `t:{rlqs_${key}}`,
    member,
    allowed,
    windowSeconds: 60,
    leave,
  });

  it('the reports of one turn of the event loop share one script call, each answered its own states, in order', async () => {
    const now = Date.now();
    await store.report([entry('warm', 's0.0', 0)], now); // connected, script loaded
    const before = await evalshaCalls(raw);
    const answers = await Promise.all([
      store.report([entry('a', 's1.0', 3), entry('b', 's1.1', 1)], now),
      store.report([entry('a', 's2.0', 4)], now),
      store.report([entry('a', 's3.0', 0), entry('c', 's3.1', 2)], now),
    ]);
    expect((await evalshaCalls(raw)) - before).toBe(1);
    expect(answers).toEqual([
      [
        { participants: 1, usage: 3 },
        { participants: 1, usage: 1 },
      ],
      [{ participants: 2, usage: 7 }],
      [
        { participants: 3, usage: 7 },
        { participants: 1, usage: 2 },
      ],
    ]);
    // A participant leaving in the next call: one fewer, the usage kept.
    expect(await store.report([entry('a', 's2.0', 0, true)], now)).toEqual([{ participants: 2, usage: 7 }]);
    const start = Math.floor(now / 60_000) * 60_000;
    expect(await raw.get(`t:{rlqs_a}u60_${start}`)).toBe('7');
    const ttl = await raw.pttl(`t:{rlqs_a}u60_${start}`);
    expect(ttl).toBeGreaterThan(start + 60_000 - now + 55_000);
    expect(ttl).toBeLessThanOrEqual(start + 60_000 - now + 60_000);
    expect(await raw.pttl('t:{rlqs_a}p')).toBeGreaterThan(29_000);
  });

  it('a report of more than 500 counters is several calls, sent together; every state answered', async () => {
    const now = Date.now();
    const before = await evalshaCalls(raw);
    const reports = Array.from({ length: 1200 }, (_, i) => entry(`big${i}`, 'b.0', 1));
    const states = await store.report(reports, now);
    expect((await evalshaCalls(raw)) - before).toBe(3);
    expect(states).toHaveLength(1200);
    expect(states.every((s) => s.participants === 1 && s.usage === 1)).toBe(true);
  });
});
