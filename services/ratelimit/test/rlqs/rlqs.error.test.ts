import * as grpc from '@grpc/grpc-js';
import { useMemcached } from '@platform/testkit/fixtures';
import { startRedis } from '@platform/testkit/redis';
import { afterEach, describe, expect, it } from 'vitest';
import { RLQS_METHOD_PATH } from '../../src/rlqs/protos.js';
import { type RunningApp, startApp } from '../integration/app-harness.js';
import { RlqsClient, describe as show } from './rlqs-client.js';

const RULES =
  'domain: q\ndescriptors:\n  - key: name\n    rate_limit: { unit: minute, requests_per_unit: 90 }\n';

const running: { app: RunningApp; client: RlqsClient }[] = [];
afterEach(async () => {
  for (const r of running.splice(0)) {
    r.client.close();
    await r.app.close();
  }
});

async function start(env: Record<string, string> = {}) {
  const app = await startApp({ 'rules.yaml': RULES }, env);
  const client = new RlqsClient(app.grpc);
  running.push({ app, client });
  return { app, client };
}

describe('RLQS: bad input and backends that cannot serve it', () => {
  it('an empty domain ends the stream with INVALID_ARGUMENT', async () => {
    const { client } = await start();
    const s = client.stream('');
    s.report([{ bucket: { name: 'x' } }]);
    const status = await s.done();
    expect(status.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect(status.details).toMatch(/domain must not be empty/);
  });

  it('a bucket id with no pairs or an empty key or value is skipped; the others are answered', async () => {
    const { client } = await start();
    const s = client.stream('q');
    const r = await s.exchange([
      { bucket: {} },
      { bucket: { name: '' } },
      { bucket: { name: 'ok' }, allowed: 1 },
    ]);
    expect(r.bucket_action.map((a) => a.bucket_id.bucket)).toEqual([{ name: 'ok' }]);
  });

  it('a bucket the report holds twice is counted twice and answered once, with the state after both', async () => {
    const { client } = await start();
    const s = client.stream('q');
    const r = await s.exchange([
      { bucket: { name: 'twice' }, allowed: 50 },
      { bucket: { name: 'other' }, allowed: 1 },
      { bucket: { name: 'twice' }, allowed: 45 },
    ]);
    // 95 of 90 reported in this window: the cap, once, in the order of first appearance.
    expect(r.bucket_action.map((a) => [a.bucket_id.bucket.name, show(a)])).toEqual([
      ['twice', 'DENY_ALL'],
      ['other', 'TB 90/90/60'],
    ]);
  });

  it('protobuf that does not decode: INTERNAL, and the server goes on serving', async () => {
    const { app, client } = await start();
    const raw = new grpc.Client(app.grpc, grpc.credentials.createInsecure());
    const call = raw.makeBidiStreamRequest(
      RLQS_METHOD_PATH,
      (b: Buffer) => b,
      (b: Buffer) => b,
    );
    const status = new Promise<grpc.StatusObject>((resolve) => call.on('status', resolve));
    call.on('error', () => {});
    call.on('data', () => {});
    call.write(Buffer.from([0x0a, 0xff, 0xff, 0xff]));
    expect((await status).code).toBe(grpc.status.INTERNAL);
    raw.close();
    const s = client.stream('q');
    expect(show((await s.exchange([{ bucket: { name: 'x' }, allowed: 1 }])).bucket_action[0]!)).toBe(
      'TB 90/90/60',
    );
  });

  it('RLQS_MAX_BUCKETS_PER_STREAM: a stream reporting more is closed with RESOURCE_EXHAUSTED', async () => {
    const { client } = await start({ RLQS_MAX_BUCKETS_PER_STREAM: '2' });
    const s = client.stream('q');
    s.report([{ bucket: { name: 'a' } }, { bucket: { name: 'b' } }, { bucket: { name: 'c' } }]);
    const status = await s.done();
    expect(status.code).toBe(grpc.status.RESOURCE_EXHAUSTED);
    expect(status.details).toMatch(/RLQS_MAX_BUCKETS_PER_STREAM/);
  });

  it('RLQS_MAX_BUCKETS: the stream that would pass it is closed with RESOURCE_EXHAUSTED; the others go on', async () => {
    const { app, client } = await start({ RLQS_MAX_BUCKETS: '3' });
    const a = client.stream('q');
    expect(
      (await a.exchange([{ bucket: { name: 'a1' } }, { bucket: { name: 'a2' } }])).bucket_action,
    ).toHaveLength(2);
    const b = client.stream('q');
    b.report([{ bucket: { name: 'b1' } }, { bucket: { name: 'b2' } }]);
    const status = await b.done();
    expect(status.code).toBe(grpc.status.RESOURCE_EXHAUSTED);
    expect(status.details).toMatch(/tracks 3 buckets \(RLQS_MAX_BUCKETS\)/);
    // The first stream's buckets are still answered, and the closed stream's one was given back.
    expect((await a.exchange([{ bucket: { name: 'a1' }, allowed: 1 }])).bucket_action).toHaveLength(1);
    const c = client.stream('q');
    expect(show((await c.exchange([{ bucket: { name: 'c1' }, allowed: 1 }])).bucket_action[0]!)).toBe(
      'TB 90/90/60',
    );
    expect(app.app.registry.snapshot().counters.get('ratelimit.rlqs.over_capacity')).toBe(1);
  });

  it('RLQS_MAX_STREAMS: one stream more is refused with RESOURCE_EXHAUSTED; once one closes, a new one is served', async () => {
    const { client } = await start({ RLQS_MAX_STREAMS: '1' });
    const a = client.stream('q');
    await a.exchange([{ bucket: { name: 'x' } }]);
    const b = client.stream('q');
    b.report([{ bucket: { name: 'y' } }]);
    const status = await b.done();
    expect(status.code).toBe(grpc.status.RESOURCE_EXHAUSTED);
    expect(status.details).toMatch(/RLQS_MAX_STREAMS/);
    await a.close();
    const c = client.stream('q');
    expect((await c.exchange([{ bucket: { name: 'z' }, allowed: 1 }])).bucket_action).toHaveLength(1);
  });

  it('RLQS_ENABLED=false: not served (UNIMPLEMENTED)', async () => {
    const { client } = await start({ RLQS_ENABLED: 'false' });
    const s = client.stream('q');
    s.report([{ bucket: { name: 'x' } }]);
    expect((await s.done()).code).toBe(grpc.status.UNIMPLEMENTED);
  });

  describe('memcached', () => {
    const memcached = useMemcached();
    it('cannot hold the shared state: every stream fails with FAILED_PRECONDITION saying so', async () => {
      const { client } = await start({
        BACKEND_TYPE: 'memcache',
        MEMSTORE_HOST_PORT: `${memcached.host}:${memcached.port}`,
      });
      const s = client.stream('q');
      s.report([{ bucket: { name: 'x' } }]);
      const status = await s.done();
      expect(status.code).toBe(grpc.status.FAILED_PRECONDITION);
      expect(status.details).toMatch(/needs BACKEND_TYPE memory or redis/);
    });
  });

  it('a count near 2^64 is answered as at the limit, on Redis, and the counter stays usable', async () => {
    const redis = await startRedis({ fresh: true });
    try {
      const { client } = await start({ KVSTORE_URL: `127.0.0.1:${redis.port}` });
      const s = client.stream('q');
      // uint64's largest value with a bucket beside it in the same piece of the report
      const r = await s.exchange([
        { bucket: { name: 'huge' }, allowed: 2 ** 64 - 1, elapsedSeconds: 5 },
        { bucket: { name: 'small' }, allowed: 1 },
      ]);
      expect(r.bucket_action.map((a) => `${a.bucket_id.bucket.name} ${show(a)}`)).toEqual([
        'huge DENY_ALL',
        'small TB 90/90/60',
      ]);
      // more of the same on the counter (it would overflow int64 unclamped), from a second stream
      const other = client.stream('q');
      const again = await other.exchange([{ bucket: { name: 'huge' }, allowed: 9.2e18, denied: 2 ** 63 }]);
      expect(show(again.bucket_action[0]!)).toBe('DENY_ALL');
    } finally {
      await redis.stop();
    }
  });

  it('Redis down: BACKEND_FAILURE_MODE=allow answers ALLOW_ALL; error answers nothing (Envoy keeps its assignment until the TTL)', async () => {
    const redis = await startRedis({ fresh: true });
    try {
      const env = { KVSTORE_URL: `127.0.0.1:${redis.port}`, KVSTORE_TIMEOUT: '300ms' };
      const allow = await start({ ...env, BACKEND_FAILURE_MODE: 'allow' });
      const error = await start(env);
      const a = allow.client.stream('q');
      const e = error.client.stream('q');
      expect(show((await a.exchange([{ bucket: { name: 'x' }, allowed: 1 }])).bucket_action[0]!)).toBe(
        'TB 90/90/60',
      );
      expect(show((await e.exchange([{ bucket: { name: 'x' }, allowed: 1 }])).bucket_action[0]!)).toBe(
        'TB 45/45/60',
      );
      await redis.stop();
      expect(show((await a.exchange([{ bucket: { name: 'x' }, allowed: 1 }])).bucket_action[0]!)).toBe(
        'ALLOW_ALL',
      );
      const before = e.responses.length;
      e.report([{ bucket: { name: 'x' }, allowed: 1 }]);
      await expect(e.response(before + 1, 1500)).rejects.toThrow(/no response/);
      expect(error.app.app.registry.snapshot().counters.get('ratelimit.rlqs.backend_error')).toBeGreaterThan(
        0,
      );
      // Back up: answered again.
      await redis.restart();
      let answered = false;
      for (let i = 0; i < 40 && !answered; i++) {
        const n = e.responses.length;
        e.report([{ bucket: { name: 'x' }, allowed: 1 }]);
        answered = await e.response(n + 1, 500).then(
          () => true,
          () => false,
        );
      }
      expect(answered).toBe(true);
    } finally {
      await redis.stop();
    }
  });
});
