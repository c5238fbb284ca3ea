import { useRedis } from '@platform/testkit/fixtures';
import { startRedisCluster } from '@platform/testkit/redis';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type RunningApp, startApp } from '../integration/app-harness.js';
import { RlqsClient, describe as show } from './rlqs-client.js';

/**
 * Global fairness with the state in Redis: two RLQS servers (two apps on one Redis), three
 * streams (two on the first, one on the second), a clock shared by both.
 */
const RULES = `
domain: q
descriptors:
  - key: name
    rate_limit: { unit: minute, requests_per_unit: 90 }
`;

const redis = useRedis();
const running: { app: RunningApp; client: RlqsClient }[] = [];
afterEach(async () => {
  for (const r of running.splice(0)) {
    r.client.close();
    await r.app.close();
  }
});

function sharedClock() {
  const c = { ms: Math.ceil(Date.now() / 60_000) * 60_000 + 1_000 };
  return { c, now: () => c.ms };
}

async function server(env: Record<string, string>, now: () => number, prefix: string) {
  const app = await startApp({ 'rules.yaml': RULES }, { ...env, CACHE_KEY_PREFIX: prefix }, { now });
  const client = new RlqsClient(app.grpc);
  running.push({ app, client });
  return { app, client };
}

function fairness(name: string, env: () => Record<string, string>) {
  describe(`RLQS on ${name}: two servers, three streams`, () => {
    it('the rate is split equally across the streams of both servers; both servers compute the same shares', async () => {
      const t = sharedClock();
      const prefix = `f${Date.now()}:`;
      const one = await server(env(), t.now, prefix);
      const two = await server(env(), t.now, prefix);
      const a = one.client.stream('q');
      const b = one.client.stream('q');
      const c = two.client.stream('q');
      const bucket = { name: 'fair', pod: 'any' };
      expect(show((await a.exchange([{ bucket, allowed: 1 }])).bucket_action[0]!)).toBe('TB 90/90/60');
      expect(show((await c.exchange([{ bucket, allowed: 1 }])).bucket_action[0]!)).toBe('TB 45/45/60');
      expect(show((await b.exchange([{ bucket, allowed: 1 }])).bucket_action[0]!)).toBe('TB 30/30/60');
      // `a` is on the same server as `b`: pushed at once; `c` learns at its next report.
      await a.until(bucket, 'TB 30/30/60');
      t.c.ms += 5_000;
      c.report([{ bucket, allowed: 3, elapsedSeconds: 5 }]);
      await c.until(bucket, 'TB 30/30/60');
      // The sum of the shares is the rule's limit.
      expect([a, b, c].map((s) => s.latest(bucket))).toEqual(['TB 30/30/60', 'TB 30/30/60', 'TB 30/30/60']);
      // `c` leaves (its server drops it from the shared state): the others get 45 at their next report.
      expect((await c.close()).code).toBe(0);
      t.c.ms += 5_000;
      a.report([{ bucket, elapsedSeconds: 5 }]);
      await a.until(bucket, 'TB 45/45/60');
      await b.until(bucket, 'TB 45/45/60');
    });

    it('the limit reached over both servers: DENY_ALL on every stream within one report, until the window ends', async () => {
      const t = sharedClock();
      const prefix = `d${Date.now()}:`;
      const one = await server(env(), t.now, prefix);
      const two = await server(env(), t.now, prefix);
      const a = one.client.stream('q');
      const b = one.client.stream('q');
      const c = two.client.stream('q');
      const bucket = { name: 'deny' };
      for (const s of [a, b, c]) await s.exchange([{ bucket, allowed: 1 }]);
      t.c.ms += 5_000;
      await a.exchange([{ bucket, allowed: 30, elapsedSeconds: 5 }]);
      await c.exchange([{ bucket, allowed: 30, elapsedSeconds: 5 }]);
      b.report([{ bucket, allowed: 27, elapsedSeconds: 5 }]); // 3 + 30 + 30 + 27 = 90
      await b.until(bucket, 'DENY_ALL');
      await a.until(bucket, 'DENY_ALL'); // same server: at once
      t.c.ms += 5_000;
      c.report([{ bucket, denied: 9, elapsedSeconds: 5 }]); // the other server: at its next report
      await c.until(bucket, 'DENY_ALL');
      t.c.ms = Math.ceil(t.c.ms / 60_000) * 60_000 + 100;
      for (const s of [a, b, c]) await s.until(bucket, 'TB 30/30/60', 3000);
    });
  });
}

fairness('one Redis', () => ({ KVSTORE_URL: `${redis.host}:${redis.port}` }));

describe('RLQS on a Redis Cluster', () => {
  let cluster: Awaited<ReturnType<typeof startRedisCluster>>;
  beforeAll(async () => {
    cluster = await startRedisCluster(3);
  });
  afterAll(async () => {
    await cluster.stop();
  });
  fairness('a 3-master Redis Cluster', () => ({ KVSTORE_URL: cluster.hostPorts, KVSTORE_TYPE: 'cluster' }));
});

describe('RLQS state in Redis', () => {
  it('a participant not heard of for RLQS_ASSIGNMENT_TTL_S no longer takes a share (a silent stream of another server)', async () => {
    const t = sharedClock();
    const prefix = `a${Date.now()}:`;
    const env = { KVSTORE_URL: `${redis.host}:${redis.port}` };
    const one = await server(env, t.now, prefix);
    const two = await server(env, t.now, prefix);
    const live = one.client.stream('q');
    const silent = two.client.stream('q');
    const bucket = { name: 'ages' };
    await live.exchange([{ bucket, allowed: 1 }]);
    expect(show((await silent.exchange([{ bucket, allowed: 1 }])).bucket_action[0]!)).toBe('TB 45/45/60');
    t.c.ms += 10_000;
    live.report([{ bucket, elapsedSeconds: 10 }]);
    await live.until(bucket, 'TB 45/45/60');
    t.c.ms += 6_000; // `silent` last reported 16 s ago: past the 15 s TTL
    live.report([{ bucket, elapsedSeconds: 6 }]);
    await live.until(bucket, 'TB 90/90/60');
  });

  it('per rule counter: a sorted set of participants and the window usage under one hash tag', async () => {
    const t = sharedClock();
    const prefix = `k${Date.now()}:`;
    const one = await server({ KVSTORE_URL: `${redis.host}:${redis.port}` }, t.now, prefix);
    const s = one.client.stream('q');
    await s.exchange([{ bucket: { name: 'keys', pod: 'p' }, allowed: 7 }]);
    const raw = new Redis({ host: redis.host, port: redis.port });
    try {
      const tag = `${prefix}{rlqs_q_name_keys_}`;
      const members = await raw.zrange(`${tag}p`, 0, -1);
      expect(members).toHaveLength(1);
      // `<server id (10)><stream number>.<bucket number>`, base 36.
      expect(members[0]).toMatch(/^[0-9a-z]{11,}\.0$/);
      const start = Math.floor(t.c.ms / 60_000) * 60_000;
      expect(await raw.get(`${tag}u60_${start}`)).toBe('7');
      await s.close();
      // The stream's end takes it out of the shared state.
      for (let i = 0; i < 50 && (await raw.zcard(`${tag}p`)) > 0; i++)
        await new Promise((r) => setTimeout(r, 20));
      expect(await raw.zcard(`${tag}p`)).toBe(0);
    } finally {
      raw.disconnect();
    }
  });
});
