import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDebugServer } from '../../src/observability/debug-server.js';
import type { RunningHttpServer } from '../../src/observability/http-listen.js';
import { StatsRegistry } from '../../src/stats/registry.js';

const registry = new StatsRegistry();
let rules: string[] = [];
let server: RunningHttpServer;

beforeAll(async () => {
  server = await startDebugServer({ host: '127.0.0.1', port: 0 }, { registry, rlconfigLines: () => rules });
});
afterAll(() => server.close());

describe('debug server', () => {
  it('/ lists the paths', async () => {
    const body = await (await fetch(`${server.url}/`)).text();
    expect(body).toContain('/rlconfig:');
    expect(body).toContain('/stats:');
    expect(body).toContain('/debug/pprof/:');
  });

  it('/rlconfig prints the rule lines sorted', async () => {
    rules = [
      'rl.foo_bar: unit=MINUTE requests_per_unit=10, shadow_mode: false, quota_mode: false',
      'another.key: unit=SECOND requests_per_unit=1, shadow_mode: true, quota_mode: false',
    ];
    const body = await (await fetch(`${server.url}/rlconfig`)).text();
    expect(body).toBe(
      'another.key: unit=SECOND requests_per_unit=1, shadow_mode: true, quota_mode: false\nrl.foo_bar: unit=MINUTE requests_per_unit=10, shadow_mode: false, quota_mode: false\n',
    );
  });

  it('/stats prints the current counters of the registry', async () => {
    registry.counter('ratelimit.service.rate_limit.rl.foo.over_limit').add(5);
    registry.counter('ratelimit.service.config_load_success').inc();
    const body = await (await fetch(`${server.url}/stats`)).text();
    expect(body.split('\n')).toEqual(
      expect.arrayContaining([
        'ratelimit.service.config_load_success: 1',
        'ratelimit.service.rate_limit.rl.foo.over_limit: 5',
      ]),
    );
    registry.counter('ratelimit.service.rate_limit.rl.foo.over_limit').add(1);
    expect(await (await fetch(`${server.url}/stats`)).text()).toContain(
      'ratelimit.service.rate_limit.rl.foo.over_limit: 6',
    );
  });

  it('/debug/pprof/profile returns a CPU profile covering the requested seconds', async () => {
    const res = await fetch(`${server.url}/debug/pprof/profile?seconds=1`);
    expect(res.status).toBe(200);
    const profile = (await res.json()) as { nodes: unknown[]; startTime: number; endTime: number };
    expect(profile.nodes.length).toBeGreaterThan(0);
    // microseconds: the profile spans the requested second
    expect(profile.endTime - profile.startTime).toBeGreaterThanOrEqual(900_000);
    expect((await fetch(`${server.url}/debug/pprof/profile?seconds=abc`)).status).toBe(400);
  });

  it('/debug/pprof/heap returns a V8 heap snapshot', async () => {
    const res = await fetch(`${server.url}/debug/pprof/heap`);
    expect(res.status).toBe(200);
    const snapshot = (await res.json()) as {
      snapshot: { meta: { node_fields: string[] }; node_count: number };
    };
    expect(snapshot.snapshot.meta.node_fields).toContain('name');
    expect(snapshot.snapshot.node_count).toBeGreaterThan(1000);
  });

  it('unknown paths are 404', async () => {
    expect((await fetch(`${server.url}/nope`)).status).toBe(404);
  });
});
