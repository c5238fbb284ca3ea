import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parseSettings } from '../../src/config.js';
import type { RunningHttpServer } from '../../src/observability/http-listen.js';
import { parseObservabilitySettings } from '../../src/settings/observability.js';
import { DEFAULT_MAPPING_YAML } from '../../src/stats/default-mapping.js';
import { MetricMapper } from '../../src/stats/prometheus-mapper.js';
import { startPullMetricsServer } from '../../src/stats/pull-metrics.js';
import { StatsRegistry } from '../../src/stats/registry.js';

let server: RunningHttpServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

function trafficOverLimit(registry: StatsRegistry): void {
  registry.counter('ratelimit.service.rate_limit.mongo_cps.database_users.over_limit').add(3);
  registry.counter('ratelimit.service.rate_limit.mongo_cps.database_users.total_hits').add(8);
  registry.counter('ratelimit.service.rate_limit.rl.key1_v1.key2.over_limit').add(2);
  registry.counter('ratelimit.service.call.should_rate_limit.redis_error').inc();
  registry.counter('ratelimit_server.ShouldRateLimit.total_requests').add(8);
  registry.timer('ratelimit_server.ShouldRateLimit.response_time').record(250);
  registry.timer('ratelimit_server.ShouldRateLimit.response_time').record(750);
  registry.counter('ratelimit.service.config_load_success').inc();
  registry.counter('ratelimit.service.rate_limit.mongo_cps.domain_not_found').inc();
}

describe('pull metrics endpoint', () => {
  it('exposes the default mapping names and labels of the spec at PULLMETRICS_PATH', async () => {
    const settings = parseObservabilitySettings({ USE_PULLMETRICS: 'true', PULLMETRICS_ADDR: '127.0.0.1:0' });
    const registry = new StatsRegistry();
    trafficOverLimit(registry);
    server = await startPullMetricsServer(settings.pullMetrics, registry);
    const res = await fetch(`${server.url}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/plain; version=0.0.4');
    const text = await res.text();
    const lines = text.split('\n');
    expect(lines).toContain('# TYPE ratelimit_service_rate_limit_over_limit counter');
    expect(lines).toContain(
      'ratelimit_service_rate_limit_over_limit{domain="mongo_cps",key1="database_users"} 3',
    );
    expect(lines).toContain(
      'ratelimit_service_rate_limit_over_limit{domain="rl",key1="key1_v1",key2="key2"} 2',
    );
    expect(lines).toContain(
      'ratelimit_service_rate_limit_total_hits{domain="mongo_cps",key1="database_users"} 8',
    );
    expect(lines).toContain('ratelimit_service_should_rate_limit_error{err_type="redis_error"} 1');
    expect(lines).toContain('ratelimit_service_total_requests{grpc_method="ShouldRateLimit"} 8');
    expect(lines).toContain('ratelimit_service_response_time_seconds_sum{grpc_method="ShouldRateLimit"} 1');
    expect(lines).toContain('ratelimit_service_response_time_seconds_count{grpc_method="ShouldRateLimit"} 2');
    expect(lines).toContain('ratelimit_service_config_load_success 1');
    // unmapped names keep their statsd name, escaped
    expect(lines).toContain('ratelimit_service_rate_limit_mongo_cps_domain_not_found 1');
    expect((await fetch(`${server.url}/other`)).status).toBe(404);
  });

  it('PROMETHEUS_RESPONSE_TIME_AS_MILLISECONDS (PULLMETRICS_...) observes the response time in ms, as the reference', async () => {
    const settings = parseSettings({
      USE_PROMETHEUS: 'true',
      PROMETHEUS_ADDR: '127.0.0.1:0',
      PROMETHEUS_RESPONSE_TIME_AS_MILLISECONDS: 'true',
    }).observability;
    const registry = new StatsRegistry();
    trafficOverLimit(registry);
    server = await startPullMetricsServer(settings.pullMetrics, registry);
    const lines = (await (await fetch(`${server.url}/metrics`)).text()).split('\n');
    expect(lines).toContain(
      'ratelimit_service_response_time_seconds_sum{grpc_method="ShouldRateLimit"} 1000',
    );
    expect(lines).toContain('ratelimit_service_response_time_seconds_count{grpc_method="ShouldRateLimit"} 2');
  });

  it('PULLMETRICS_MAPPER_YAML replaces the default mapping (glob, regex, $n labels, drop)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'rl-mapper-'));
    const file = join(dir, 'mapper.yaml');
    await writeFile(
      file,
      `mappings:
  - match: "ratelimit.service.rate_limit.*.*.over_limit"
    name: "rl_over_limit_total"
    labels:
      tenant: "$1"
      rule: "$2"
  - match: '^ratelimit_server\\.(\\w+)\\.(total_requests)$'
    match_type: regex
    name: "server_$2"
    labels:
      method: "$1"
  - match: "ratelimit.service.call.*.*"
    action: drop
    name: dropped
`,
    );
    const settings = parseObservabilitySettings({
      PULLMETRICS_ADDR: '127.0.0.1:0',
      PULLMETRICS_PATH: '/prom',
      PULLMETRICS_MAPPER_YAML: file,
    });
    const registry = new StatsRegistry();
    trafficOverLimit(registry);
    server = await startPullMetricsServer(settings.pullMetrics, registry);
    const lines = (await (await fetch(`${server.url}/prom`)).text()).split('\n');
    expect(lines).toContain('rl_over_limit_total{rule="database_users",tenant="mongo_cps"} 3');
    expect(lines).toContain('server_total_requests{method="ShouldRateLimit"} 8');
    expect(lines.some((l) => l.includes('redis_error'))).toBe(false);
    expect(lines.some((l) => l.startsWith('ratelimit_service_rate_limit_over_limit'))).toBe(false);
  });

  it('rejects a bad mapping file naming the setting and the rule', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'rl-mapper-'));
    const file = join(dir, 'bad.yaml');
    await writeFile(file, 'mappings:\n  - match: "a.*"\n    labels: {"bad-name": "$1"}\n    name: x\n');
    const settings = parseObservabilitySettings({
      PULLMETRICS_ADDR: '127.0.0.1:0',
      PULLMETRICS_MAPPER_YAML: file,
    });
    await expect(startPullMetricsServer(settings.pullMetrics, new StatsRegistry())).rejects.toThrow(
      /^PULLMETRICS_MAPPER_YAML: .*mappings\[0\]: invalid label name 'bad-name'/,
    );
  });

  it('the default mapping only maps the counter kinds it names', () => {
    const mapper = MetricMapper.fromYaml(DEFAULT_MAPPING_YAML);
    expect(mapper.map('ratelimit.service.config_load_error', 'gauge')).toEqual({
      name: 'ratelimit_service_config_load_error',
      labels: {},
    });
    expect(mapper.map('ratelimit.service.config_load_error', 'counter')).toEqual({
      name: 'ratelimit_service_config_load_error',
      labels: {},
    });
    expect(mapper.map('ratelimit.service.rate_limit.d.a.b.c.over_limit', 'counter')?.name).toBe(
      'ratelimit_service_rate_limit_d_a_b_c_over_limit',
    );
  });
});
