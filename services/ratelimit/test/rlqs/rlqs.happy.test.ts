import { renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type RunningApp, startApp } from '../integration/app-harness.js';
import { RlqsClient, type RlqsStream, describe as show } from './rlqs-client.js';

/**
 * The quota service through the real gRPC server on the in-process store, with a clock the test
 * moves (the window cap and abandoning follow it; the sweep runs every real second).
 */
const RULES = `
domain: q
descriptors:
  - key: env
    value: prod
    descriptors:
      - key: name
        rate_limit: { unit: minute, requests_per_unit: 600 }
  - key: name
    rate_limit: { unit: minute, requests_per_unit: 90 }
  - key: free
    rate_limit: { unlimited: true }
  - key: shadow
    shadow_mode: true
    rate_limit: { unit: minute, requests_per_unit: 2 }
  - key: tb
    rate_limit: { unit: second, unit_multiplier: 10, requests_per_unit: 100, algorithm: token_bucket, burst: 40 }
  - key: zero
    rate_limit: { unit: minute, requests_per_unit: 0 }
`;

/** A minute-aligned clock the test moves; starts 1 s into a minute. */
function clock() {
  const c = { ms: Math.ceil(Date.now() / 60_000) * 60_000 + 1_000 };
  return { c, now: () => c.ms };
}

const running: { app: RunningApp; client: RlqsClient }[] = [];
afterEach(async () => {
  for (const r of running.splice(0)) {
    r.client.close();
    await r.app.close();
  }
});

async function start(env: Record<string, string> = {}, now?: () => number) {
  const app = await startApp({ 'rules.yaml': RULES }, env, now ? { now } : {});
  const client = new RlqsClient(app.grpc);
  running.push({ app, client });
  return { app, client };
}

const counter = (app: RunningApp, name: string) => app.app.registry.snapshot().counters.get(name) ?? 0;
const gauge = (app: RunningApp, name: string) => app.app.registry.snapshot().gauges.get(name) ?? 0;

/** Sleeps in small steps until `check` holds (the sweep runs once a real second). */
async function eventually(check: () => boolean, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  expect(check()).toBe(true);
}

describe('RLQS: StreamRateLimitQuotas on the gRPC listener', () => {
  it("Envoy's first report (time_elapsed 0s) is answered at once: a token bucket of whole seconds, tokens_per_fill set, TTL above 5 s", async () => {
    const { client } = await start();
    const s = client.stream('q');
    const r = await s.exchange([{ bucket: { name: 'api' }, allowed: 1, elapsedSeconds: 0 }]);
    expect(r.bucket_action).toEqual([
      {
        bucket_id: { bucket: { name: 'api' } },
        bucket_action: 'quota_assignment_action',
        quota_assignment_action: {
          assignment_time_to_live: { seconds: 15 },
          rate_limit_strategy: {
            strategy: 'token_bucket',
            token_bucket: { max_tokens: 90, tokens_per_fill: { value: 90 }, fill_interval: { seconds: 60 } },
          },
        },
      },
    ]);
  });

  it('bucket ids map to descriptors by walking the rule tree (the README example); no rule or unlimited: ALLOW_ALL', async () => {
    const { app, client } = await start();
    const s = client.stream('q');
    const buckets: Record<string, string>[] = [
      { name: 'api', env: 'prod', pod: 'p-1' }, // env first at the top: [env=prod, name=api]
      { name: 'api', pod: 'p-1' }, // [name=api]
      { env: 'dev', name: 'api' }, // [env=dev]: no rule
      { free: 'yes' }, // unlimited
      { zero: 'z' }, // requests_per_unit 0
      { nothing: 'here' },
    ];
    const r = await s.exchange(buckets.map((bucket) => ({ bucket, allowed: 1 })));
    expect(r.bucket_action.map(show)).toEqual([
      'TB 600/600/60',
      'TB 90/90/60',
      'ALLOW_ALL',
      'ALLOW_ALL',
      'DENY_ALL',
      'ALLOW_ALL',
    ]);
    expect(counter(app, 'ratelimit.service.rate_limit.q.env_prod.name.total_hits')).toBe(1);
    expect(counter(app, 'ratelimit.service.rate_limit.q.name.total_hits')).toBe(1);
    // An unknown domain: ALLOW_ALL and domain_not_found, as ShouldRateLimit.
    const other = client.stream('nope');
    expect((await other.exchange([{ bucket: { name: 'api' } }])).bucket_action.map(show)).toEqual([
      'ALLOW_ALL',
    ]);
    expect(counter(app, 'ratelimit.service.rate_limit.nope.domain_not_found')).toBe(1);
  });

  it('a token-bucket rule is split as its burst (max_tokens) and its rate (tokens_per_fill) over the window', async () => {
    const { client } = await start();
    const a = client.stream('q');
    const b = client.stream('q');
    expect(show((await a.exchange([{ bucket: { tb: 'x' }, allowed: 1 }])).bucket_action[0]!)).toBe(
      'TB 40/100/10',
    );
    expect(show((await b.exchange([{ bucket: { tb: 'x' }, allowed: 1 }])).bucket_action[0]!)).toBe(
      'TB 20/50/10',
    );
    await a.until({ tb: 'x' }, 'TB 20/50/10');
  });

  it('shares: a stream alone gets the whole rate; a joiner halves it at once on this server; a leaver gives it back', async () => {
    const { client } = await start();
    const a = client.stream('q');
    const b = client.stream('q');
    const c = client.stream('q');
    const bucket = { name: 'shared' };
    expect(show((await a.exchange([{ bucket, allowed: 1 }])).bucket_action[0]!)).toBe('TB 90/90/60');
    expect(show((await b.exchange([{ bucket, allowed: 1 }])).bucket_action[0]!)).toBe('TB 45/45/60');
    await a.until(bucket, 'TB 45/45/60'); // pushed, without a report of its own
    expect(show((await c.exchange([{ bucket, allowed: 1 }])).bucket_action[0]!)).toBe('TB 30/30/60');
    await a.until(bucket, 'TB 30/30/60');
    await b.until(bucket, 'TB 30/30/60');
    expect((await c.close()).code).toBe(0);
    await a.until(bucket, 'TB 45/45/60');
    await b.until(bucket, 'TB 45/45/60');
  });

  it('usage reaching the limit in the window: DENY_ALL on every stream until the window ends, then the shares again', async () => {
    const t = clock();
    const { app, client } = await start({}, t.now);
    const a = client.stream('q');
    const b = client.stream('q');
    const bucket = { name: 'hot' };
    await a.exchange([{ bucket, allowed: 1 }]);
    await b.exchange([{ bucket, allowed: 1 }]);
    await a.until(bucket, 'TB 45/45/60');
    t.c.ms += 5_000;
    expect(show((await a.exchange([{ bucket, allowed: 50, elapsedSeconds: 5 }])).bucket_action[0]!)).toBe(
      'TB 45/45/60',
    );
    t.c.ms += 5_000;
    // 1 + 1 + 50 + 38 = 90: the limit is reached.
    expect(
      show((await b.exchange([{ bucket, allowed: 38, denied: 4, elapsedSeconds: 10 }])).bucket_action[0]!),
    ).toBe('DENY_ALL');
    await a.until(bucket, 'DENY_ALL');
    // Every report until the window ends is answered DENY_ALL (the TTL refreshed).
    t.c.ms += 5_000;
    expect(show((await a.exchange([{ bucket, denied: 7, elapsedSeconds: 5 }])).bucket_action[0]!)).toBe(
      'DENY_ALL',
    );
    expect(counter(app, 'ratelimit.service.rate_limit.q.name.within_limit')).toBe(90);
    expect(counter(app, 'ratelimit.service.rate_limit.q.name.over_limit')).toBe(11);
    expect(counter(app, 'ratelimit.service.rate_limit.q.name.total_hits')).toBe(101);
    expect(counter(app, 'ratelimit.service.rate_limit.q.name.near_limit')).toBe(18);
    t.c.ms = Math.ceil(t.c.ms / 60_000) * 60_000; // the window ends
    await a.until(bucket, 'TB 45/45/60', 3000);
    await b.until(bucket, 'TB 45/45/60', 3000);
    // Both still report every 5 s (a participant not heard of for the TTL no longer takes a share).
    // (A push may cross a report's answer, so wait for the assignment rather than the next message.)
    b.report([{ bucket, allowed: 2, elapsedSeconds: 5 }]);
    a.report([{ bucket, allowed: 2, elapsedSeconds: 5 }]);
    await a.until(bucket, 'TB 45/45/60');
    await b.until(bucket, 'TB 45/45/60');
  });

  it('shadow mode: ALLOW_ALL past the limit, counted as shadow_mode; SHADOW_MODE does it for every rule', async () => {
    const { app, client } = await start();
    const s = client.stream('q');
    expect(show((await s.exchange([{ bucket: { shadow: 'a' }, allowed: 5 }])).bucket_action[0]!)).toBe(
      'ALLOW_ALL',
    );
    expect(counter(app, 'ratelimit.service.rate_limit.q.shadow.shadow_mode')).toBe(3);
    const global = await start({ SHADOW_MODE: 'true' });
    const g = global.client.stream('q');
    expect(show((await g.exchange([{ bucket: { name: 'x' }, allowed: 100 }])).bucket_action[0]!)).toBe(
      'ALLOW_ALL',
    );
    expect(show((await g.exchange([{ bucket: { zero: 'x' }, allowed: 1 }])).bucket_action[0]!)).toBe(
      'ALLOW_ALL',
    );
    expect(counter(global.app, 'ratelimit.service.rate_limit.q.name.shadow_mode')).toBe(10);
    expect(counter(global.app, 'ratelimit.service.global_shadow_mode')).toBe(2);
  });

  it('a bucket with no request reported for RLQS_ABANDON_AFTER_S is abandoned on that stream; its share goes back', async () => {
    const t = clock();
    const { app, client } = await start({ RLQS_ABANDON_AFTER_S: '20' }, t.now);
    const busy = client.stream('q');
    const idle = client.stream('q');
    const bucket = { name: 'a' };
    await busy.exchange([{ bucket, allowed: 3 }]);
    await idle.exchange([{ bucket, allowed: 1 }]);
    await busy.until(bucket, 'TB 45/45/60');
    for (let i = 0; i < 3; i++) {
      t.c.ms += 5_000;
      await busy.exchange([{ bucket, allowed: 1, elapsedSeconds: 5 }]);
      await idle.exchange([{ bucket, elapsedSeconds: 5 }]); // zero usage, as Envoy reports an idle bucket
    }
    expect(idle.latest(bucket)).toBe('TB 45/45/60');
    t.c.ms += 5_000; // 20 s without a request on `idle`
    await busy.exchange([{ bucket, allowed: 1, elapsedSeconds: 5 }]);
    await idle.until(bucket, 'ABANDON', 3000);
    await busy.until(bucket, 'TB 90/90/60');
    expect(counter(app, 'ratelimit.rlqs.abandoned')).toBe(1);
    expect(gauge(app, 'ratelimit.rlqs.buckets')).toBe(1);
    // A request on the abandoned bucket starts a new subscription.
    expect(show((await idle.exchange([{ bucket, allowed: 1 }])).bucket_action[0]!)).toBe('TB 45/45/60');
  });

  it('a rules reload re-sends the changed assignments to every open stream', async () => {
    const { app, client } = await start();
    const s = client.stream('q');
    await s.exchange([
      { bucket: { name: 'r' }, allowed: 1 },
      { bucket: { env: 'prod', name: 'r' }, allowed: 1 },
    ]);
    const responses = s.responses.length;
    const file = join(app.configDir, 'rules.yaml');
    writeFileSync(`${file}.partial`, RULES.replace('requests_per_unit: 90', 'requests_per_unit: 120'));
    renameSync(`${file}.partial`, file);
    await s.until({ name: 'r' }, 'TB 120/120/60');
    // Only what changed: the env=prod bucket keeps its 600.
    expect(s.responses.slice(responses).flatMap((r) => r.bucket_action.map(show))).toEqual(['TB 120/120/60']);
  });

  it('statistics: streams and buckets open, assignments sent, reports and their answer time', async () => {
    const { app, client } = await start();
    const a = client.stream('q');
    const b = client.stream('q');
    await a.exchange([{ bucket: { name: 's1' }, allowed: 1 }, { bucket: { other: 'x' } }]);
    await b.exchange([{ bucket: { zero: 'y' }, denied: 2 }]);
    expect(gauge(app, 'ratelimit.rlqs.streams')).toBe(2);
    expect(gauge(app, 'ratelimit.rlqs.buckets')).toBe(3);
    expect(counter(app, 'ratelimit.rlqs.streams_total')).toBe(2);
    expect(counter(app, 'ratelimit.rlqs.assignments.token_bucket')).toBe(1);
    expect(counter(app, 'ratelimit.rlqs.assignments.allow_all')).toBe(1);
    expect(counter(app, 'ratelimit.rlqs.assignments.deny_all')).toBe(1);
    expect(counter(app, 'ratelimit_server.StreamRateLimitQuotas.total_requests')).toBe(2);
    expect(counter(app, 'ratelimit.service.rate_limit.q.zero.over_limit')).toBe(2);
    expect(
      app.app.registry.snapshot().timers.get('ratelimit_server.StreamRateLimitQuotas.response_time')?.count,
    ).toBe(2);
    await a.close();
    await eventually(
      () => gauge(app, 'ratelimit.rlqs.streams') === 1 && gauge(app, 'ratelimit.rlqs.buckets') === 1,
    );
  });

  it('stopping the service ends every stream with OK', async () => {
    const { app, client } = await start();
    const s: RlqsStream = client.stream('q');
    await s.exchange([{ bucket: { name: 'z' }, allowed: 1 }]);
    await app.close();
    expect((await s.done()).code).toBe(0);
  });
});
