import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { startMemcached } from '@platform/testkit/memcached';
import { startRedis, startRedisCluster } from '@platform/testkit/redis';
import { describe, expect, it } from 'vitest';
import { type RunningApp, startApp } from '../integration/app-harness.js';

/**
 * Backend outage under load, through the real app over HTTP: two service instances share the
 * backend, one with BACKEND_FAILURE_MODE=allow, one with the reference's `error`. While a bounded
 * request loop runs, the backend (a single Redis, or one master of a 3-master cluster) is stopped
 * and brought back. Every request must get an answer per the policy, /healthcheck must turn 500
 * (KVSTORE_HEALTH_CHECK_ACTIVE_CONNECTION=true) and back to 200, and counting must work again with
 * no restart of the service.
 */
const RULES = `
domain: outage
descriptors:
  - key: load
    rate_limit: { unit: minute, requests_per_unit: 1000000 }
  - key: user
    rate_limit: { unit: minute, requests_per_unit: 3 }
`;

interface Sample {
  phase: 'before' | 'outage' | 'after';
  status: number | 'no answer';
}

const body = (key: string, value: string) =>
  JSON.stringify({ domain: 'outage', descriptors: [{ entries: [{ key, value }] }] });

async function post(app: RunningApp, key: string, value: string): Promise<number | 'no answer'> {
  try {
    const r = await fetch(`${app.http}/json`, {
      method: 'POST',
      body: body(key, value),
      signal: AbortSignal.timeout(5000),
    });
    await r.text();
    return r.status;
  } catch {
    return 'no answer';
  }
}

async function health(app: RunningApp): Promise<number> {
  return (await fetch(`${app.http}/healthcheck`)).status;
}

/** Four workers posting `load` descriptors until stopped (at most 4000 requests). */
function load(app: RunningApp, phase: () => Sample['phase']) {
  const samples: Sample[] = [];
  const inFlight = { before: 0, outage: 0, after: 0 };
  let stopped = false;
  const worker = async (w: number) => {
    for (let i = 0; !stopped && samples.length < 4000; i++) {
      const p = phase();
      inFlight[p]++;
      const status = await post(app, 'load', `w${w}-${i % 40}`);
      inFlight[p]--;
      samples.push({ phase: p, status });
    }
  };
  const done = Promise.all([0, 1, 2, 3].map(worker));
  return {
    samples,
    count: (p: Sample['phase']) => samples.filter((s) => s.phase === p).length,
    inFlight: (p: Sample['phase']) => inFlight[p],
    stop: async () => {
      stopped = true;
      await done;
    },
  };
}

async function until(check: () => Promise<boolean> | boolean, what: string, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (await check()) return;
    await sleep(100);
  }
  throw new Error(`timed out waiting for ${what}`);
}

/**
 * What the `error` instance answers while the backend is down: the reference's error (Redis), or,
 * for memcached, the call answered from counts of 0 as the reference's memcached cache does.
 */
type ErrorModeOutage = 'fails' | 'answers';

async function outageScenario(
  env: Record<string, string>,
  stop: () => Promise<void>,
  restart: () => Promise<void>,
  errorModeOutage: ErrorModeOutage = 'fails',
): Promise<void> {
  const common = { ...env, KVSTORE_HEALTH_CHECK_ACTIVE_CONNECTION: 'true', BACKEND_TIMEOUT_MS: '1000' };
  const allow = await startApp({ 'r.yaml': RULES }, { ...common, BACKEND_FAILURE_MODE: 'allow' });
  const error = await startApp({ 'r.yaml': RULES }, { ...common, BACKEND_FAILURE_MODE: 'error' });
  let phase: Sample['phase'] = 'before';
  const loads = [load(allow, () => phase), load(error, () => phase)] as const;
  try {
    await until(() => loads.every((l) => l.count('before') >= 20), 'requests before the outage');
    expect(await health(allow)).toBe(200);

    phase = 'outage';
    // Requests sent before the outage are answered before the backend goes: one still on its way
    // when it stops may fail, and would be counted as a failure before the outage.
    await until(() => loads.every((l) => l.inFlight('before') === 0), 'requests before the outage to end');
    await stop();
    await until(async () => (await health(allow)) === 500 && (await health(error)) === 500, 'unhealthy');
    await until(() => loads.every((l) => l.count('outage') >= 20), 'requests during the outage');

    await restart();
    await until(async () => (await health(allow)) === 200 && (await health(error)) === 200, 'healthy again');
    phase = 'after';
    await until(() => loads.every((l) => l.count('after') >= 20), 'requests after the outage');
  } finally {
    for (const l of loads) await l.stop();
  }
  const [fromAllow, fromError] = loads.map((l) => l.samples);
  // Every request got an answer, in every phase.
  expect([...fromAllow!, ...fromError!].filter((s) => s.status === 'no answer')).toEqual([]);
  // Before and after: counted normally. During: `allow` fails open (200); `error` answers the
  // reference's error (HTTP 400, gRPC UNKNOWN), except for the few requests that still reached a
  // working node (cluster) or were sent just before the backend went; with memcached both answer.
  for (const samples of [fromAllow!, fromError!]) {
    const statuses = (p: Sample['phase']) =>
      new Set(samples.filter((s) => s.phase === p).map((s) => s.status));
    expect(statuses('before')).toEqual(new Set([200]));
    expect(statuses('after')).toEqual(new Set([200]));
  }
  expect(new Set(fromAllow!.filter((s) => s.phase === 'outage').map((s) => s.status))).toEqual(
    new Set([200]),
  );
  const errorOutage = fromError!.filter((s) => s.phase === 'outage').map((s) => s.status);
  if (errorModeOutage === 'answers') {
    expect(new Set(errorOutage)).toEqual(new Set([200]));
  } else {
    expect(errorOutage).toContain(400);
    expect(errorOutage.every((s) => s === 400 || s === 200)).toBe(true);
  }
  // Counting really goes through the backend again: the fourth hit of a 3-per-minute user is 429.
  for (const app of [allow, error]) {
    const user = randomUUID();
    const statuses = [];
    for (let i = 0; i < 4; i++) statuses.push(await post(app, 'user', user));
    expect(statuses).toEqual([200, 200, 200, 429]);
  }
  await allow.close();
  await error.close();
}

describe('backend outage under load (policy, health, recovery without restart)', () => {
  it('single Redis stopped and restarted', async () => {
    const redis = await startRedis({ fresh: true });
    try {
      await outageScenario(
        { KVSTORE_URL: `127.0.0.1:${redis.port}`, KVSTORE_POOL_SIZE: '2' },
        () => redis.stop(),
        () => redis.restart(),
      );
    } finally {
      await redis.stop();
    }
  }, 60_000);

  it('memcached stopped and restarted (BACKEND_TYPE=memstore): reads fail open in both modes', async () => {
    const memcached = await startMemcached({ fresh: true });
    try {
      await outageScenario(
        { BACKEND_TYPE: 'memstore', MEMSTORE_HOST_PORT: memcached.hostPort },
        () => memcached.stop(),
        () => memcached.restart(),
        'answers',
      );
    } finally {
      await memcached.stop();
    }
  }, 60_000);

  it('one master of a 3-master Redis Cluster stopped and restarted', async () => {
    const cluster = await startRedisCluster(3);
    try {
      await outageScenario(
        { KVSTORE_URL: cluster.hostPorts, KVSTORE_TYPE: 'cluster' },
        () => cluster.stopNode(1),
        () => cluster.restartNode(1),
      );
    } finally {
      await cluster.stop();
    }
  }, 90_000);
});
