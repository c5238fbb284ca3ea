import { type PrometheusServer, startPrometheus } from '@platform/testkit/prometheus';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningHttpServer } from '../../src/observability/http-listen.js';
import { parseObservabilitySettings } from '../../src/settings/observability.js';
import { startPullMetricsServer } from '../../src/stats/pull-metrics.js';
import { StatsRegistry } from '../../src/stats/registry.js';

/**
 * A real Prometheus server (Debian package `prometheus`) scrapes the pull-metrics endpoint every
 * second; the series and labels are read back through Prometheus's own query API.
 */
let prometheus: PrometheusServer | undefined;
let endpoint: RunningHttpServer | undefined;
const registry = new StatsRegistry();

beforeAll(async () => {
  const settings = parseObservabilitySettings({ USE_PULLMETRICS: 'true', PULLMETRICS_ADDR: '127.0.0.1:0' });
  endpoint = await startPullMetricsServer(settings.pullMetrics, registry);
  prometheus = await startPrometheus({
    jobs: [{ job: 'ratelimit', targets: [`127.0.0.1:${endpoint.port}`] }],
  });
});

afterAll(async () => {
  await prometheus?.stop();
  await endpoint?.close();
});

interface QueryResult {
  metric: Record<string, string>;
  value: [number, string];
}

async function query(promql: string): Promise<QueryResult[]> {
  return (prometheus as PrometheusServer).query(promql);
}

/** Polls until Prometheus returns a series for `promql` with `value` (bounded by the test timeout). */
async function waitForSeries(promql: string, value: string): Promise<QueryResult[]> {
  for (;;) {
    const result = await query(promql);
    if (result.some((r) => r.value[1] === value)) return result;
    await new Promise((r) => setTimeout(r, 250));
  }
}

describe('pull metrics scraped by a real Prometheus', () => {
  it('shows ratelimit_service_rate_limit_over_limit with domain, key1, key2 labels', async () => {
    registry.counter('ratelimit.service.rate_limit.rl.foo.over_limit').add(4);
    registry.counter('ratelimit.service.rate_limit.rl.key1_v1.key2.over_limit').add(2);
    registry.counter('ratelimit_server.ShouldRateLimit.total_requests').add(9);

    const two = await waitForSeries('ratelimit_service_rate_limit_over_limit{key2="key2"}', '2');
    expect(two[0]?.metric).toMatchObject({
      __name__: 'ratelimit_service_rate_limit_over_limit',
      domain: 'rl',
      key1: 'key1_v1',
      key2: 'key2',
      job: 'ratelimit',
    });
    const one = await waitForSeries('ratelimit_service_rate_limit_over_limit{domain="rl",key1="foo"}', '4');
    expect(one[0]?.metric.key2).toBeUndefined();
    await waitForSeries('ratelimit_service_total_requests{grpc_method="ShouldRateLimit"}', '9');

    // more traffic: the next scrape shows the new running total
    registry.counter('ratelimit.service.rate_limit.rl.foo.over_limit').add(6);
    await waitForSeries('ratelimit_service_rate_limit_over_limit{domain="rl",key1="foo"}', '10');
    const up = await query('up{job="ratelimit"}');
    expect(up[0]?.value[1]).toBe('1');
  });
});
